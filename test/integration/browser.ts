import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { ROOT } from './harness';

/** Debian's chromium, driven by playwright-core (no browser download). */
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'screenshots');

/** Headless Chromium for the browser tests, with nothing running in the background. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run node scripts/test-tools.mjs (npm test does)`);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
