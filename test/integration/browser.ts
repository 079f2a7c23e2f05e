import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
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

/**
 * The page's script errors and console errors, collected for a final `toEqual([])`; console
 * errors matching `expected` (admin API answers a test provokes, e.g. /status of 40[013]/) are left out.
 */
export function collectPageProblems(page: Page, expected: RegExp): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !expected.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return problems;
}
