/**
 * Hosted card fields in a real browser (Debian's chromium driven by playwright-core). Four
 * origins on four ports: the API, the fields origin (the iframe and tessera.js), a merchant page
 * the publishable key allows, and one it does not. The merchant pages are tiny local servers.
 */
import fs from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { launchChromium, SCREENSHOTS, SKIMMER_HOOKS, startMerchantSite, type MerchantSite } from './browser';
import { ROOT, startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const window: any;
declare const document: any;

const MANIFEST = path.join(ROOT, 'packages', 'js', 'dist', 'browser', 'manifest.json');
const LOADER = path.join(ROOT, 'packages', 'js', 'dist', 'index.js');
const PAN = '4242424242424242';
const CVC = '987';
const EXPIRY_YEAR = new Date().getUTCFullYear() + 4;
const EXPIRY_TYPED = `12${String(EXPIRY_YEAR).slice(2)}`;

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let fieldsOrigin = '';
let publishableKey = '';
let secretKey = '';
let allowed: MerchantSite;
let disallowed: MerchantSite;

/**
 * A merchant's checkout: hooks first (as a skimming script would install them), then tessera.js
 * with its published SRI hash, then the card fields. Everything the page can observe is recorded.
 */
function checkoutPage(key: string, integrity: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title>
<style>body{font-family:system-ui,sans-serif;max-width:520px;margin:24px auto;padding:0 12px}#card{margin:16px 0}</style>
${SKIMMER_HOOKS}
</head><body><main>
<h1>Checkout</h1>
<label for="email">Email</label> <input id="email" type="email">
<div id="card"></div>
<button id="pay" type="button">Pay</button>
<p id="outcome"></p>
</main>
<script src="${fieldsOrigin}/js/v1/tessera.js" integrity="${integrity}" crossorigin="anonymous"></script>
<script>
window.events = [];
var card = Tessera(${JSON.stringify(key)}).cardFields({
  container: '#card',
  title: 'Card details',
  style: { base: { fontSize: '16px', color: '#1a1a1a' }, invalid: { color: '#b00020' } },
});
window.card = card;
['ready', 'focus', 'blur', 'change'].forEach(function (name) {
  card.on(name, function (e) { window.events.push(Object.assign({ type: name }, e)); });
});
document.getElementById('pay').addEventListener('click', function () {
  card.tokenize().then(function (r) { window.result = r; }, function (e) { window.result = { error: e.code }; });
});
</script>
</body></html>`;
}

/** A page that loads tessera.js through the npm package's loadTessera (its CommonJS build, given an `exports`). */
function loaderPage(integrity: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Loader</title></head><body><main><div id="card"></div></main>
<script>var exports = {};</script>
<script src="/loader.js"></script>
<script>
exports.loadTessera({ fieldsOrigin: ${JSON.stringify(fieldsOrigin)}, integrity: ${JSON.stringify(integrity)} }).then(
  function (Tessera) {
    window.loaded = typeof Tessera;
    // Its errors are the global's TesseraError, and the package's guard knows them.
    try { Tessera('not a key'); } catch (e) {
      window.guarded = [e instanceof Tessera.TesseraError, exports.isTesseraError(e), exports.isTesseraError(new Error('x')), e.code, e.type];
    }
  },
  function (e) { window.loaded = 'failed: ' + e.message; },
);
</script></body></html>`;
}

function createPublishableKey(origins: string[]): { apiKey: string; id: string } {
  const args = [
    'create',
    '--kind',
    'publishable',
    '--merchant',
    'shop',
    '--mode',
    'test',
    '--json',
    ...origins.flatMap((o) => ['--origin', o]),
  ];
  return JSON.parse(stack.cli(args).trim().split('\n').pop() ?? '') as { apiKey: string; id: string };
}

/** A merchant's site: /loader (a page that loads tessera.js through the npm package) with its /loader.js, the checkout at any other path. */
function merchantSite(checkout: () => string, integrity: string): Promise<MerchantSite> {
  return startMerchantSite((url) => {
    if (url === '/loader.js') return { contentType: 'text/javascript', body: fs.readFileSync(LOADER) };
    return url === '/loader' ? loaderPage(integrity) : checkout();
  });
}

async function openCheckout(context: BrowserContext, origin: string): Promise<{ page: Page; console: string[] }> {
  const page = await context.newPage();
  const console: string[] = [];
  page.on('console', (msg) => console.push(msg.text()));
  page.on('pageerror', (err) => console.push(`pageerror: ${err.message}`));
  await page.goto(origin);
  return { page, console };
}

async function waitForReady(page: Page): Promise<Frame> {
  await page.waitForFunction(() => window.events.some((e: any) => e.type === 'ready'), undefined, { timeout: 30_000 });
  const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`));
  if (!frame) throw new Error('card fields frame not found');
  return frame;
}

const lastChange = (page: Page): Promise<any> => page.evaluate(() => [...window.events].reverse().find((e: any) => e.type === 'change'));

let context: BrowserContext;

beforeAll(async () => {
  const integrity = (JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Record<string, { integrity: string }>)['tessera.js']!.integrity;
  let key = '';
  allowed = await merchantSite(() => checkoutPage(key, integrity), integrity);
  disallowed = await merchantSite(() => checkoutPage(key, integrity), integrity);
  redis = await startRedis();
  stack = await startStack(redis);
  fieldsOrigin = stack.fieldsUrl;
  publishableKey = createPublishableKey([allowed.origin]).apiKey;
  key = publishableKey;
  secretKey = stack.createKey('shop').apiKey;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 720, height: 720 } });
});

afterAll(async () => {
  await browser?.close();
  await allowed?.close();
  await disallowed?.close();
  await stack?.stop();
  await redis?.stop();
});

describe('card fields on an allowed merchant page', () => {
  let page: Page;
  let frame: Frame;
  let console: string[];

  beforeAll(async () => {
    ({ page, console } = await openCheckout(context, allowed.origin));
    frame = await waitForReady(page);
  });

  it('serves the iframe with a strict CSP framed only by the key’s origins, no referrer, and cross-origin CORP', async () => {
    const res = await fetch(`${fieldsOrigin}/fields/v1/card?key=${publishableKey}`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    const directives = Object.fromEntries(csp.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives['default-src']).toBe("'none'");
    expect(directives['script-src']).toMatch(/^'sha256-[A-Za-z0-9+/=]+'$/);
    expect(directives['connect-src']).toBe("'self'");
    expect(directives['form-action']).toBe("'none'");
    expect(directives['base-uri']).toBe("'none'");
    expect(directives['frame-ancestors']).toBe(allowed.origin);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('x-frame-options')).toBeNull();
  });

  it('labels every input, with autofill hints and a numeric keyboard, under the title the merchant chose', async () => {
    expect(await page.locator('#card iframe').getAttribute('title')).toBe('Card details');
    const inputs = await frame.evaluate(() =>
      [...document.querySelectorAll('input')].map((el: any) => ({
        id: el.id,
        autocomplete: el.getAttribute('autocomplete'),
        inputmode: el.getAttribute('inputmode'),
        labelled: el.labels.length > 0,
      })),
    );
    expect(inputs).toEqual([
      { id: 'cc-number', autocomplete: 'cc-number', inputmode: 'numeric', labelled: true },
      { id: 'cc-exp', autocomplete: 'cc-exp', inputmode: 'numeric', labelled: true },
      { id: 'cc-csc', autocomplete: 'cc-csc', inputmode: 'numeric', labelled: true },
      { id: 'cc-name', autocomplete: 'cc-name', inputmode: null, labelled: true },
    ]);
  });

  it('detects the brand from the leading digits as the shopper types', async () => {
    const number = frame.getByLabel('Card number');
    for (const [digits, brand, label] of [
      ['4', 'visa', 'Visa'],
      ['5555', 'mastercard', 'Mastercard'],
      ['34', 'amex', 'American Express'],
      ['37', 'amex', 'American Express'],
    ] as const) {
      await number.fill('');
      await number.pressSequentially(digits);
      await page.waitForFunction((b) => [...window.events].reverse().find((e: any) => e.type === 'change')?.brand === b, brand);
      expect(await frame.locator('#cc-brand').textContent()).toBe(label);
    }
    await number.fill('');
  });

  it('shows a Luhn error only after the number field loses focus, in the live region, with aria-invalid', async () => {
    const number = frame.getByLabel('Card number');
    await number.click();
    await number.pressSequentially('4242424242424241');
    expect(await frame.locator('#cc-number-error').textContent()).toBe('');
    expect(await number.getAttribute('aria-invalid')).toBe('false');
    expect((await lastChange(page)).error).toBeUndefined();
    await number.press('Tab');
    await expect(frame.locator('#cc-number-error').textContent()).resolves.toBe('Your card number is invalid.');
    expect(await number.getAttribute('aria-invalid')).toBe('true');
    expect(await frame.locator('#card-errors').getAttribute('aria-live')).toBe('polite');
    expect(await frame.locator('#card-errors #cc-number-error').count()).toBe(1);
    expect((await lastChange(page)).error).toEqual({ code: 'invalid_number', message: 'Your card number is invalid.' });
    await number.fill('');
    await frame.getByLabel('Expiry date (MM / YY)').fill('');
  });

  it('reads January typed without its leading zero, as "1/30", "1 30" or "130", as 01 / 30', async () => {
    const expiry = frame.getByLabel('Expiry date (MM / YY)');
    for (const typed of ['1/30', '1 30', '130']) {
      await expiry.fill('');
      await expiry.pressSequentially(typed);
      expect({ typed, shown: await expiry.inputValue() }).toEqual({ typed, shown: '01 / 30' });
      await expiry.press('Tab');
      expect({ typed, invalid: await expiry.getAttribute('aria-invalid') }).toEqual({ typed, invalid: 'false' });
    }
    await expiry.fill('');
  });

  it('moves focus into the frame with Tab and out of it again, both ways', async () => {
    const focusedInFrame = () => frame.evaluate(() => document.activeElement?.id ?? null);
    await page.locator('#email').focus();
    await page.keyboard.press('Tab');
    expect(await focusedInFrame()).toBe('cc-number');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focusedInFrame()).toBe('cc-csc');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('pay');
    await page.keyboard.press('Shift+Tab');
    expect(await focusedInFrame()).toBe('cc-csc');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
  });

  it('has no accessibility violation (axe-core)', async () => {
    const results = await new AxeBuilder({ page }).include('#card').analyze();
    expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  });

  it('gives the merchant page a token and the card summary for 4242 4242 4242 4242', async () => {
    await frame.getByLabel('Card number').pressSequentially(PAN);
    await frame.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
    await frame.getByLabel('Security code').pressSequentially(CVC);
    await page.waitForFunction(() => [...window.events].reverse().find((e: any) => e.type === 'change')?.complete === true);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'card-fields.png') });
    await page.locator('#pay').click();
    await page.waitForFunction(() => window.result !== undefined, undefined, { timeout: 30_000 });
    const result = await page.evaluate(() => window.result);
    expect(result).toEqual({
      token: expect.stringMatching(/^tok\./),
      card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: EXPIRY_YEAR },
    });
    // A real token of the key's merchant: its secret key reads it back. Made in a browser, it is
    // provisional until the merchant's server retains it.
    const read = await fetch(`${stack.baseUrl}/v1/token/${result.token}`, { headers: { 'x-api-key': secretKey } });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ last4: '4242', brand: 'visa', provisional: true });
    const retained = await fetch(`${stack.baseUrl}/v1/token/${result.token}/retain`, {
      method: 'POST',
      headers: { 'x-api-key': secretKey },
    });
    expect(retained.status).toBe(200);
    expect(await retained.json()).toMatchObject({ token: result.token, provisional: false });
  });

  it('never lets the merchant page see the card number or CVC: not in messages, fetch or XHR', async () => {
    const captured: string[] = await page.evaluate(() => window.captured);
    expect(captured.some((c) => c.startsWith('port ') && c.includes('"tokenized"'))).toBe(true);
    const spaced = PAN.replace(/(\d{4})(?=\d)/g, '$1 ');
    // Tokens, and the key and script hashes of tessera.js's page report (SAQ A kit), are random text: masked.
    const withoutTokens = captured.map((c) =>
      c
        .replace(/tok\.[A-Za-z0-9_-]+/g, 'tok.')
        .replace(/tpk_(test|live)_[0-9A-Za-z]+/g, 'tpk_')
        .replace(/"(sha256|integrity)":"[^"]+"/g, '"$1":""'),
    );
    expect(withoutTokens.filter((c) => c.includes(PAN) || c.includes(spaced) || c.includes(CVC))).toEqual([]);
    // Nothing but the documented events reached the page, with nothing but their documented fields.
    const types = new Set(captured.filter((c) => c.startsWith('port ')).map((c) => JSON.parse(c.slice(5)).type));
    expect([...types].every((t) => ['ready', 'focus', 'blur', 'change', 'tokenized', 'resize'].includes(t))).toBe(true);
    // The one request the page makes: tessera.js's report of its scripts to the fields origin (docs/browser.md, SAQ A kit).
    const pageReport = `fetch ${fieldsOrigin}/v1/browser/page-reports?`;
    expect(captured.filter((c) => (c.startsWith('fetch ') || c.startsWith('xhr ')) && !c.startsWith(pageReport))).toEqual([]);
    expect(console.filter((c) => /pageerror|Refused/.test(c))).toEqual([]);
  });

  it('ignores look-alike messages once the private channel is set up, both ways', async () => {
    const before = await page.evaluate(() => window.events.length);
    await page.evaluate(() => {
      // A script on the page forges a field event to itself, and a second handshake to the iframe.
      window.postMessage({ type: 'change', empty: true, complete: true, valid: true, brand: 'amex' }, '*');
      const iframe = document.querySelector('#card iframe');
      const nonce = new URLSearchParams(new URL(iframe.src).hash.slice(1)).get('nonce');
      const channel: any = new MessageChannel();
      window.hijacked = [];
      channel.port1.onmessage = (e: any) => window.hijacked.push(e.data);
      iframe.contentWindow.postMessage({ type: 'tessera:connect', v: 1, nonce, style: {}, holderName: false }, '*', [channel.port2]);
      channel.port1.postMessage({ type: 'tokenize', id: 1 });
    });
    await page.waitForTimeout(500);
    expect(await page.evaluate(() => window.events.length)).toBe(before);
    expect(await page.evaluate(() => window.hijacked)).toEqual([]);
  });

  it('stays inert when the parent origin claimed in its URL is not the real parent', async () => {
    await page.evaluate(
      ({ fields, key, claimed }) => {
        const iframe = document.createElement('iframe');
        iframe.title = 'spoofed';
        iframe.src = `${fields}/fields/v1/card?key=${key}#nonce=abcdefghijklmnopqrstuvwx&origin=${encodeURIComponent(claimed)}`;
        document.body.appendChild(iframe);
      },
      { fields: fieldsOrigin, key: publishableKey, claimed: disallowed.origin },
    );
    await page.waitForFunction(() => document.querySelector('iframe[title="spoofed"]') !== null);
    const spoofed = await (await page.locator('iframe[title="spoofed"]').elementHandle())!.contentFrame();
    await spoofed!.getByText('These card fields work only inside a merchant').waitFor();
    expect(await spoofed!.locator('#card-form').isHidden()).toBe(true);
    await page.evaluate(() => document.querySelector('iframe[title="spoofed"]').remove());
  });

  it('cannot read the iframe’s document', async () => {
    const access = await page.evaluate(() => {
      const iframe = document.querySelector('#card iframe');
      let threw = false;
      try {
        void iframe.contentWindow.document.body;
      } catch {
        threw = true;
      }
      return { contentDocument: iframe.contentDocument, threw };
    });
    expect(access).toEqual({ contentDocument: null, threw: true });
  });
});

describe('the fields page for other keys', () => {
  it('is refused for a secret key, an unknown key or a revoked one: a page without inputs, whose one script tells the framing page why', async () => {
    const revocable = createPublishableKey([allowed.origin]);
    expect((await fetch(`${fieldsOrigin}/fields/v1/card?key=${revocable.apiKey}`)).status).toBe(200);
    stack.revokeKey(revocable.id);
    const unknownKey = publishableKey.slice(0, -7) + (publishableKey.at(-7) === 'A' ? 'B' : 'A') + publishableKey.slice(-6);
    for (const [key, status] of [
      [revocable.apiKey, 404],
      [unknownKey, 404],
      [secretKey, 400],
    ] as const) {
      const res = await fetch(`${fieldsOrigin}/fields/v1/card?key=${key}`);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-security-policy')).toContain('frame-ancestors *');
      const html = await res.text();
      expect(html).toContain('data-code="api_key_invalid"');
      expect(html).not.toMatch(/<input|<form/);
      expect(html.match(/<script>/g)).toHaveLength(1);
    }
  });

  it('shows no form when opened on its own, outside a checkout page', async () => {
    const page = await context.newPage();
    await page.goto(`${fieldsOrigin}/fields/v1/card?key=${publishableKey}`);
    await page.getByText('These card fields work only inside a merchant').waitFor();
    expect(await page.locator('#card-form').isHidden()).toBe(true);
    await page.close();
  });

  it('@tessera/js loads tessera.js with its SRI hash', async () => {
    const page = await context.newPage();
    await page.goto(`${allowed.origin}/loader`);
    await page.waitForFunction(() => window.loaded !== undefined);
    expect(await page.evaluate(() => window.loaded)).toBe('function');
    expect(await page.evaluate(() => window.guarded)).toEqual([true, true, false, 'invalid_publishable_key', 'integration_error']);
    await page.close();
  });
});

describe('card fields on a page the key does not allow', () => {
  it('are not loaded: the frame says why, and tokenize() rejects with origin_not_allowed', async () => {
    const { page } = await openCheckout(context, disallowed.origin);
    await page.waitForFunction(() => document.querySelector('#card iframe') !== null);
    const refused = await (await page.locator('#card iframe').elementHandle())!.contentFrame();
    await refused!.getByText('Card payments are not available on this page').waitFor();
    expect(await refused!.locator('input').count()).toBe(0);
    expect(await page.evaluate(() => window.events.some((e: any) => e.type === 'ready'))).toBe(false);
    await page.locator('#pay').click();
    await page.waitForFunction(() => window.result !== undefined);
    expect(await page.evaluate(() => window.result)).toEqual({ error: 'origin_not_allowed' });
    // The page's own script cannot call the browser route either: the fields service answers no CORS at all.
    const direct = await page.evaluate(
      async ({ api, key }) => {
        try {
          await fetch(`${api}/v1/browser/tokens`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            body: '{}',
          });
          return 'answered';
        } catch {
          return 'blocked';
        }
      },
      { api: stack.fieldsUrl, key: publishableKey },
    );
    expect(direct).toBe('blocked');
    await page.close();
  });
});

describe('the browser tokenization route', () => {
  const card = { number: PAN, expiryMonth: 12, expiryYear: EXPIRY_YEAR, cvv: CVC };
  const errorCode = async (res: Response): Promise<string> => ((await res.json()) as { error: { code: string } }).error.code;
  const post = (headers: Record<string, string>, body: unknown = card) =>
    fetch(`${stack.fieldsUrl}/v1/browser/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': publishableKey, ...headers },
      body: JSON.stringify(body),
    });

  it('refuses a parent origin the key does not allow, and any caller but the fields origin', async () => {
    const otherParent = await post({ origin: fieldsOrigin, 'x-tessera-parent-origin': disallowed.origin });
    expect(otherParent.status).toBe(401);
    expect(await errorCode(otherParent)).toBe('origin_not_allowed');
    const fromMerchantPage = await post({ origin: allowed.origin, 'x-tessera-parent-origin': allowed.origin });
    expect(fromMerchantPage.status).toBe(401);
    expect(await errorCode(fromMerchantPage)).toBe('origin_not_allowed');
  });

  it('accepts only publishable keys', async () => {
    const res = await post({ origin: fieldsOrigin, 'x-tessera-parent-origin': allowed.origin, 'x-api-key': secretKey });
    expect(res.status).toBe(401);
    expect(await errorCode(res)).toBe('api_key_invalid');
  });

  it('validates the card with the schema of POST /v1/token', async () => {
    const headers = { origin: fieldsOrigin, 'x-tessera-parent-origin': allowed.origin };
    const unknown = await post(headers, { ...card, pin: '1234' });
    expect(unknown.status).toBe(400);
    expect(await errorCode(unknown)).toBe('parameter_unknown');
    const live = await post(headers, { ...card, number: '4000056655665556' });
    expect(live.status).toBe(400);
    expect(await errorCode(live)).toBe('live_card_in_test_mode');
  });

  it('answers no one CORS: no preflight, and no access-control-allow-origin, for the fields origin or any other', async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.fieldsUrl}/v1/browser/tokens`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key' },
      });
    const answers = await Promise.all([
      preflight(fieldsOrigin),
      preflight(allowed.origin),
      post({ origin: fieldsOrigin, 'x-tessera-parent-origin': allowed.origin }),
      post({ origin: allowed.origin, 'x-tessera-parent-origin': allowed.origin }),
    ]);
    for (const res of answers) {
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
    expect(answers[0]!.status).toBe(404);
  });

  it('leaves CORS headers off every secret-key route', async () => {
    const headers = { origin: fieldsOrigin, 'x-api-key': secretKey, 'content-type': 'application/json' };
    const answers = await Promise.all([
      fetch(`${stack.baseUrl}/v1/token`, { method: 'POST', headers, body: JSON.stringify(card) }),
      fetch(`${stack.baseUrl}/v1/token`, { method: 'OPTIONS', headers: { origin: fieldsOrigin, 'access-control-request-method': 'POST' } }),
      fetch(`${stack.baseUrl}/v1/proxy`, { method: 'POST', headers, body: '{}' }),
    ]);
    for (const res of answers) {
      expect([...res.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
  });

  it('publishes the SRI hash of tessera.js in docs/browser.md', () => {
    const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Record<string, { integrity: string }>;
    const published = [
      ...fs.readFileSync(path.join(ROOT, 'docs', 'browser.md'), 'utf8').matchAll(/integrity="(sha384-[A-Za-z0-9+/=]+)"/g),
    ].map((m) => m[1]);
    // The SRI section and the five-minute how-to: every tag a reader copies must load.
    expect(published.length).toBeGreaterThanOrEqual(2);
    expect(new Set(published)).toEqual(new Set([manifest['tessera.js']!.integrity]));
  });
});
