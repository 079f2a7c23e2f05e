import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './harness';

/** Debian's chromium, driven by playwright-core (no browser download). */
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'screenshots');

/** The Subresource Integrity hash of the built tessera.js, as docs/browser.md publishes it. */
export function tesseraJsIntegrity(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', 'js', 'dist', 'browser', 'manifest.json'), 'utf8')) as Record<
    string,
    { integrity: string }
  >;
  return manifest['tessera.js']!.integrity;
}

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

/** What a merchant's site answers to one request: a page's HTML, or a body of another type (a script). */
export type MerchantResponse = string | { contentType: string; body: string | Buffer };

export interface MerchantSite {
  /** `http://127.0.0.1:<port>`: the origin a publishable key allows, or does not. */
  origin: string;
  /** The path and query of every request the site received, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * The merchant's own web server (its checkout page, its return URL) on a port of its own, for the
 * browser to visit. `respond` answers every request, by its path and query, with status 200; it is
 * called per request, so a page can use what a test makes after the site started (a key that allows
 * this origin, a session to frame).
 */
export async function startMerchantSite(respond: (url: string) => MerchantResponse): Promise<MerchantSite> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    requests.push(url);
    const answer = respond(url);
    const { contentType, body } = typeof answer === 'string' ? { contentType: 'text/html; charset=utf-8', body: answer } : answer;
    res.writeHead(200, { 'content-type': contentType });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Node closes idle connections itself; one a page still holds open would hold up the close.
        server.closeAllConnections();
      }),
  };
}

/**
 * What a skimmer captured, with the random text a card-data scan could misread masked: tokens, the
 * publishable key and the script hashes of tessera.js's page report (SAQ A kit). A 3-digit test CVC
 * turns up in random base64 now and then.
 */
export function withoutRandomText(captured: string[]): string[] {
  return captured.map((c) =>
    c
      .replace(/tok\.[A-Za-z0-9_-]+/g, 'tok.')
      .replace(/tpk_(test|live)_[0-9A-Za-z]+/g, 'tpk_')
      .replace(/"(sha256|integrity)":"[^"]+"/g, '"$1":""')
      // Ports are random: 127.0.0.1:33987 holds "987", a test CVC.
      .replace(/(127\.0\.0\.1|localhost):\d+/g, '$1:port'),
  );
}
