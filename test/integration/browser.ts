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

/**
 * For a merchant page's <head>, before tessera.js: records into `window.captured` everything a
 * skimming script could observe (window messages, MessagePort events, fetch and XHR bodies), so a
 * test can show the card data never passed through the page.
 */
export const SKIMMER_HOOKS = `<script>
window.captured = [];
function record(kind, data) {
  var text;
  try { text = typeof data === 'string' ? data : JSON.stringify(data); } catch (e) { text = String(data); }
  window.captured.push(kind + ' ' + text);
}
window.addEventListener('message', function (e) { record('message', e.data); }, true);
var fetchBefore = window.fetch;
window.fetch = function (input, init) { record('fetch', String(input) + ' ' + String(init && init.body)); return fetchBefore.apply(this, arguments); };
var sendBefore = XMLHttpRequest.prototype.send;
XMLHttpRequest.prototype.send = function (body) { record('xhr', String(body)); return sendBefore.apply(this, arguments); };
var portHandler = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage');
Object.defineProperty(MessagePort.prototype, 'onmessage', {
  configurable: true,
  get: function () { return portHandler.get.call(this); },
  set: function (fn) { portHandler.set.call(this, function (e) { record('port', e.data); return fn.call(this, e); }); },
});
</script>`;
