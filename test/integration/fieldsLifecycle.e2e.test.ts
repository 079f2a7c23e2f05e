/**
 * Issue 26, item 1 ("fields without traps") in Chromium: the Element-style lifecycle of tessera.js
 * (create, mount, unmount, update, destroy; one set of fields per container), the `error` event and
 * typed rejections for every refusal (origin, key, a frame that never loads, network, rate limit),
 * Enter as `submit`, the merchant's accepted brands, and the API's refusals shown in the fields.
 * The merchant page installs the hooks a skimming script would; it never sees a digit.
 */
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { launchChromium, SCREENSHOTS, SKIMMER_HOOKS, startMerchantSite, tesseraJsIntegrity, type MerchantSite } from './browser';
import { findCardDataInLogs, startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const window: any;
declare const document: any;
declare const Tessera: any;
declare const getComputedStyle: any;

const PAN = '4242424242424242';
const AMEX = '378282246310005';
/** A real (non-test) card number: a test key's fields send it, and the API refuses it. */
const LIVE_CARD = '4000056655665556';
const CVC = '987';
const AMEX_CVC = '7654';
const PER_IP_PER_MINUTE = 12;
const EXPIRY_TYPED = `12${String(new Date().getUTCFullYear() + 4).slice(2)}`;

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let fieldsOrigin = '';
let publishableKey = '';
let allowed: MerchantSite;
let disallowed: MerchantSite;

/**
 * A merchant page with two containers and tessera.js; tests create and drive fields from
 * page.evaluate. `track(fields)` records every event of a set of fields in `window.events`, an
 * error event as its code, type and message (what a page would show or log).
 */
function merchantPage(key: () => string, url: string): string {
  // /csp: a page whose own Content-Security-Policy forgot the fields origin in frame-src.
  const csp = url.startsWith('/csp') ? `<meta http-equiv="Content-Security-Policy" content="frame-src 'none'">` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Checkout</title>${csp}
<style>body{font-family:system-ui,sans-serif;max-width:520px;margin:24px auto;padding:0 12px}.box{margin:12px 0;min-height:10px}</style>
${SKIMMER_HOOKS}
</head><body><main>
<h1>Checkout</h1>
<div id="a" class="box"></div>
<div id="b" class="box"></div>
</main>
<script src="${fieldsOrigin}/js/v1/tessera.js" integrity="${tesseraJsIntegrity()}" crossorigin="anonymous"></script>
<script>
window.events = [];
window.tessera = Tessera(${JSON.stringify(key())});
window.track = function (fields, label) {
  ['ready', 'focus', 'blur', 'change', 'error', 'submit'].forEach(function (name) {
    fields.on(name, function (e) {
      var payload = name === 'error' ? { code: e.code, errorType: e.type, message: e.message, isTesseraError: e instanceof Tessera.TesseraError } : e;
      window.events.push(Object.assign({}, payload, { type: name, fields: label || 'card' }));
    });
  });
  return fields;
};
window.outcome = function (promise) {
  return promise.then(
    function (r) { return { ok: r }; },
    function (e) { return { code: e.code, type: e.type, retryAfter: e.retryAfter, isTesseraError: e instanceof Tessera.TesseraError }; },
  );
};
window.thrown = function (fn) {
  try { fn(); return null; } catch (e) { return { code: e.code, type: e.type, name: e.name }; }
};
</script>
</body></html>`;
}

async function openPage(site: MerchantSite, url = '/'): Promise<{ page: Page; console: string[] }> {
  const page = await context.newPage();
  const console: string[] = [];
  page.on('console', (msg) => console.push(msg.text()));
  page.on('pageerror', (err) => console.push(`pageerror: ${err.message}`));
  await page.goto(`${site.origin}${url}`);
  return { page, console };
}

const waitForEvent = (page: Page, match: Record<string, unknown>, timeout = 30_000) =>
  page.waitForFunction((m) => window.events.some((e: any) => Object.entries(m).every(([k, v]) => e[k] === v)), match, { timeout });

/** The card-fields frame inside `container`. */
async function frameIn(page: Page, container: string): Promise<Frame> {
  const handle = await page.locator(`${container} iframe`).elementHandle();
  const frame = await handle?.contentFrame();
  if (!frame) throw new Error(`no frame in ${container}`);
  return frame;
}

const lastChange = (page: Page): Promise<any> => page.evaluate(() => [...window.events].reverse().find((e: any) => e.type === 'change'));

beforeAll(async () => {
  let key = '';
  allowed = await startMerchantSite((url) => merchantPage(() => key, url));
  disallowed = await startMerchantSite((url) => merchantPage(() => key, url));
  redis = await startRedis();
  // A shopper's limit the last test reaches (the earlier ones send 3 cards); the harness's default is unlimited.
  stack = await startStack(redis, { env: { BROWSER_TOKENS_PER_IP_PER_MINUTE: String(PER_IP_PER_MINUTE) } });
  fieldsOrigin = stack.fieldsUrl;
  const created = stack.cli([
    'create',
    '--kind',
    'publishable',
    '--merchant',
    'shop',
    '--mode',
    'test',
    '--json',
    '--origin',
    allowed.origin,
  ]);
  publishableKey = (JSON.parse(created.trim().split('\n').pop() ?? '') as { apiKey: string }).apiKey;
  key = publishableKey;
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

describe('refusals as an error event and a typed rejection', () => {
  it('a page on an origin the key does not allow hears origin_not_allowed, and tokenize() rejects with it', async () => {
    const { page, console } = await openPage(disallowed);
    await page.evaluate(() => {
      window.card = window.track(window.tessera.cardFields({ container: '#a' }));
    });
    await waitForEvent(page, { type: 'error' });
    const errors = await page.evaluate(() => window.events.filter((e: any) => e.type === 'error'));
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'origin_not_allowed',
        errorType: 'integration_error',
        isTesseraError: true,
        message: expect.stringMatching(/allowed origins/),
      }),
    ]);
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toEqual({
      code: 'origin_not_allowed',
      type: 'integration_error',
      isTesseraError: true,
    });
    // The frame shows the shopper why, instead of the browser's broken-frame page.
    const frame = await frameIn(page, '#a');
    await frame.getByText('Card payments are not available on this page').waitFor();
    expect(await frame.locator('input').count()).toBe(0);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'fields-refused-origin.png') });
    const axe = await new AxeBuilder({ page }).include('#a').analyze();
    expect(axe.violations.map((v) => v.id)).toEqual([]);
    expect(await page.evaluate(() => window.events.some((e: any) => e.type === 'ready'))).toBe(false);
    expect(console.filter((c) => /pageerror/.test(c))).toEqual([]);
    await page.close();
  });

  it('a page claiming an allowed origin it does not have is still refused by frame-ancestors', async () => {
    const { page, console } = await openPage(disallowed);
    await page.evaluate(
      ({ fields, key, claimed }) => {
        const iframe = document.createElement('iframe');
        iframe.title = 'liar';
        iframe.src = `${fields}/fields/v1/card?key=${key}&origin=${encodeURIComponent(claimed)}#nonce=abcdefghijklmnopqrstuvwx&origin=${encodeURIComponent(claimed)}`;
        document.body.appendChild(iframe);
      },
      { fields: fieldsOrigin, key: publishableKey, claimed: allowed.origin },
    );
    for (let waited = 0; !console.some((c) => /frame-ancestors/.test(c)) && waited < 15_000; waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(console.filter((c) => /frame-ancestors/.test(c))).toEqual([expect.stringContaining(allowed.origin)]);
    await page.close();
  });

  it('a bogus key (well formed, but no key of ours) gives api_key_invalid', async () => {
    const { page } = await openPage(allowed);
    const bogus = `tpk_test_${'Z'.repeat(38)}`;
    await page.evaluate((key) => {
      window.card = window.track(Tessera(key).cardFields({ container: '#a' }));
    }, bogus);
    await waitForEvent(page, { type: 'error' });
    expect(await page.evaluate(() => window.events.filter((e: any) => e.type === 'error').map((e: any) => [e.code, e.errorType]))).toEqual([
      ['api_key_invalid', 'integration_error'],
    ]);
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toMatchObject({ code: 'api_key_invalid' });
    await page.close();
  });

  it('a frame that loads but never says hello (the page’s CSP blocks the fields origin) gives fields_load_failed', async () => {
    const { page } = await openPage(allowed, '/csp');
    await page.evaluate(() => {
      window.card = window.track(window.tessera.cardFields({ container: '#a' }));
    });
    await waitForEvent(page, { type: 'error' }, 20_000);
    expect(await page.evaluate(() => window.events.filter((e: any) => e.type === 'error').map((e: any) => [e.code, e.errorType]))).toEqual([
      ['fields_load_failed', 'integration_error'],
    ]);
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toMatchObject({ code: 'fields_load_failed' });
    await page.close();
  });

  it('throws typed errors for the page’s own mistakes, on the global class', async () => {
    const { page } = await openPage(allowed);
    expect(
      await page.evaluate(() => ({
        secret: window.thrown(() => Tessera('tsk_test_' + 'a'.repeat(38))),
        container: window.thrown(() => window.tessera.cardFields({ container: '#nowhere' })),
        brands: window.thrown(() => window.tessera.cardFields({ acceptedBrands: ['visa', 'unknown'] })),
        isClass: typeof Tessera.TesseraError === 'function',
      })),
    ).toEqual({
      secret: { code: 'secret_key_in_browser', type: 'integration_error', name: 'TesseraError' },
      container: { code: 'container_not_found', type: 'integration_error', name: 'TesseraError' },
      brands: { code: 'invalid_accepted_brands', type: 'integration_error', name: 'TesseraError' },
      isClass: true,
    });
    await page.close();
  });
});

describe('the lifecycle', () => {
  let page: Page;

  beforeAll(async () => {
    ({ page } = await openPage(allowed));
  });
  afterAll(() => page.close());

  it('creates fields without mounting them, and mounts them later', async () => {
    await page.evaluate(() => {
      window.card = window.track(window.tessera.cardFields({ title: 'Card details' }));
    });
    expect(await page.locator('iframe').count()).toBe(0);
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toMatchObject({ code: 'fields_not_ready' });
    await page.evaluate(() => window.card.mount('#a'));
    await waitForEvent(page, { type: 'ready' });
    expect(await page.locator('#a iframe').getAttribute('title')).toBe('Card details');
  });

  it('refuses a second set of fields in the same container, and a second mount of the same fields', async () => {
    const thrown = await page.evaluate(() => ({
      other: window.thrown(() => window.tessera.cardFields({ container: '#a' })),
      otherLater: window.thrown(() => window.tessera.cardFields().mount(document.getElementById('a'))),
      again: window.thrown(() => window.card.mount('#b')),
    }));
    expect(thrown).toEqual({
      other: { code: 'container_has_fields', type: 'integration_error', name: 'TesseraError' },
      otherLater: { code: 'container_has_fields', type: 'integration_error', name: 'TesseraError' },
      again: { code: 'already_mounted', type: 'integration_error', name: 'TesseraError' },
    });
    expect(await page.locator('#a iframe').count()).toBe(1);
    expect(await page.locator('#b iframe').count()).toBe(0);
  });

  it('update() changes the mounted fields in place: what was typed stays', async () => {
    const frame = await frameIn(page, '#a');
    const number = frame.getByLabel('Card number');
    await number.pressSequentially('4242');
    const colour = () => number.evaluate((el: any) => getComputedStyle(el).color);
    const before = await colour();
    await page.evaluate(() => window.card.update({ style: { base: { color: 'rgb(0, 100, 0)' } }, holderName: true, title: 'Pay by card' }));
    await frame.waitForFunction(() => !document.getElementById('name-row').hidden);
    await expect(colour()).resolves.toBe('rgb(0, 100, 0)');
    expect(before).not.toBe('rgb(0, 100, 0)');
    expect(await number.inputValue()).toBe('4242');
    expect(await page.locator('#a iframe').getAttribute('title')).toBe('Pay by card');
    // One load only: the frame was not reloaded.
    expect(await page.evaluate(() => window.events.filter((e: any) => e.type === 'ready').length)).toBe(1);
    // A refused update changes nothing.
    expect(await page.evaluate(() => window.thrown(() => window.card.update({ style: { base: { color: 'url(x)' } } })))).toMatchObject({
      code: 'invalid_style',
    });
    await number.fill('');
  });

  it('unmount() removes the frame and frees the container; mount() again brings the fields back with their handlers and options', async () => {
    await page.evaluate(() => window.card.unmount());
    expect(await page.locator('iframe').count()).toBe(0);
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toMatchObject({ code: 'fields_not_ready' });
    await page.evaluate(() => window.card.mount('#b'));
    await page.waitForFunction(() => window.events.filter((e: any) => e.type === 'ready').length === 2);
    const frame = await frameIn(page, '#b');
    // The options of the update above were kept.
    await frame.waitForFunction(() => !document.getElementById('name-row').hidden);
    // #a is free again for other fields.
    await page.evaluate(() => {
      window.other = window.track(window.tessera.cardFields({ container: '#a' }), 'other');
    });
    await waitForEvent(page, { type: 'ready', fields: 'other' });
    await page.evaluate(() => window.other.destroy());
  });

  it('Enter in any field raises submit on the page, which decides to tokenize', async () => {
    const frame = await frameIn(page, '#b');
    await page.evaluate(() => {
      window.card.on('submit', () => {
        window.submitted = window.outcome(window.card.tokenize());
      });
    });
    await frame.getByLabel('Card number').pressSequentially(PAN);
    await frame.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
    await frame.getByLabel('Security code').pressSequentially(CVC);
    await frame.getByLabel('Security code').press('Enter');
    await waitForEvent(page, { type: 'submit' });
    const result = await page.evaluate(() => window.submitted);
    expect(result.ok).toMatchObject({ token: expect.stringMatching(/^tok\./), card: { brand: 'visa', last4: '4242' } });
  });

  it('destroy() ends the fields for good: later calls throw or reject with destroyed', async () => {
    await page.evaluate(() => window.card.destroy());
    expect(await page.locator('iframe').count()).toBe(0);
    expect(
      await page.evaluate(async () => ({
        mount: window.thrown(() => window.card.mount('#a')),
        update: window.thrown(() => window.card.update({})),
        on: window.thrown(() => window.card.on('ready', () => undefined)),
        tokenize: await window.outcome(window.card.tokenize()),
        again: window.thrown(() => window.card.destroy()),
      })),
    ).toEqual({
      mount: { code: 'destroyed', type: 'integration_error', name: 'TesseraError' },
      update: { code: 'destroyed', type: 'integration_error', name: 'TesseraError' },
      on: { code: 'destroyed', type: 'integration_error', name: 'TesseraError' },
      tokenize: { code: 'destroyed', type: 'integration_error', isTesseraError: true },
      again: null,
    });
  });
});

describe('refusals shown in the fields', () => {
  let page: Page;
  let frame: Frame;
  /** Requests the fields sent to the browser token route. */
  const tokenRequests: string[] = [];

  beforeAll(async () => {
    ({ page } = await openPage(allowed));
    page.on('request', (req) => {
      if (req.url().includes('/v1/browser/tokens')) tokenRequests.push(req.url());
    });
    await page.evaluate(() => {
      window.card = window.track(window.tessera.cardFields({ container: '#a', acceptedBrands: ['visa', 'mastercard'] }));
    });
    await waitForEvent(page, { type: 'ready' });
    frame = await frameIn(page, '#a');
  });
  afterAll(() => page.close());

  async function typeCard(number: string, cvc: string): Promise<void> {
    for (const [label, value] of [
      ['Card number', number],
      ['Expiry date (MM / YY)', EXPIRY_TYPED],
      ['Security code', cvc],
    ] as const) {
      await frame.getByLabel(label).fill('');
      await frame.getByLabel(label).pressSequentially(value);
    }
  }

  it('refuses a brand the merchant does not accept as soon as it is typed, and never sends it', async () => {
    await frame.getByLabel('Card number').pressSequentially('37');
    await page.waitForFunction(
      () => [...window.events].reverse().find((e: any) => e.type === 'change')?.error?.code === 'brand_not_accepted',
    );
    expect((await lastChange(page)).error).toEqual({ code: 'brand_not_accepted', message: expect.stringContaining('not accepted') });
    await expect(frame.locator('#cc-number-error').textContent()).resolves.toMatch(/not accepted/);
    await typeCard(AMEX, AMEX_CVC);
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toEqual({
      code: 'brand_not_accepted',
      type: 'validation_error',
      isTesseraError: true,
    });
    expect(await frame.getByLabel('Card number').getAttribute('aria-invalid')).toBe('true');
    expect(tokenRequests).toEqual([]);
    // update() can widen the rule: the same card is then fine.
    await page.evaluate(() => window.card.update({ acceptedBrands: ['visa', 'mastercard', 'amex'] }));
    await page.waitForFunction(() => [...window.events].reverse().find((e: any) => e.type === 'change')?.complete === true);
    await page.evaluate(() => window.card.update({ acceptedBrands: ['visa', 'mastercard'] }));
  });

  it('shows the API’s refusal (a real card on a test key) next to the number, and rejects with it', async () => {
    await typeCard(LIVE_CARD, CVC);
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toEqual({
      code: 'live_card_in_test_mode',
      type: 'validation_error',
      isTesseraError: true,
    });
    await expect(frame.locator('#cc-number-error').textContent()).resolves.toMatch(/test mode/);
    expect(await frame.getByLabel('Card number').getAttribute('aria-invalid')).toBe('true');
    expect(await frame.locator('#card-errors').getAttribute('aria-live')).toBe('polite');
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'fields-server-refusal.png') });
    // Changing the card takes the message away.
    await frame.getByLabel('Card number').press('End');
    await frame.getByLabel('Card number').press('Backspace');
    expect(await frame.getByLabel('Card number').inputValue()).toBe('4000 0566 5566 555');
    expect(await frame.evaluate(() => document.getElementById('cc-number-error').textContent)).toBe('');
  });

  it('answers a lost connection with network_error, shown in the fields, and sends the card once it is back', async () => {
    await typeCard(PAN, CVC);
    await page.route('**/v1/browser/tokens', (route) => route.abort('internetdisconnected'));
    expect(await page.evaluate(() => window.outcome(window.card.tokenize()))).toEqual({
      code: 'network_error',
      type: 'network_error',
      isTesseraError: true,
    });
    await expect(frame.locator('#cc-number-error').textContent()).resolves.toMatch(/could not be sent/);
    await page.unroute('**/v1/browser/tokens');
    expect((await page.evaluate(() => window.outcome(window.card.tokenize()))).ok).toMatchObject({ card: { last4: '4242' } });
  });

  it('past the shopper’s limit (BROWSER_TOKENS_PER_IP_PER_MINUTE), rejects with rate_limited and the server’s Retry-After', async () => {
    let outcome: any;
    for (let attempt = 0; attempt <= PER_IP_PER_MINUTE; attempt++) {
      outcome = await page.evaluate(() => window.outcome(window.card.tokenize()));
      if (outcome.ok === undefined) break;
    }
    expect(outcome).toEqual({ code: 'rate_limited', type: 'rate_limit_error', retryAfter: expect.any(Number), isTesseraError: true });
    expect(outcome.retryAfter).toBeGreaterThanOrEqual(1);
    expect(outcome.retryAfter).toBeLessThanOrEqual(60);
    await expect(frame.locator('#cc-number-error').textContent()).resolves.toMatch(/Too many attempts/);
  });

  it('never let the merchant page see a card number or CVC, in events, messages or requests', async () => {
    const captured: string[] = await page.evaluate(() => window.captured);
    const withoutTokens = captured.map((c) => c.replace(/tok\.[A-Za-z0-9_-]+/g, 'tok.'));
    const secrets = [PAN, AMEX, LIVE_CARD, CVC, AMEX_CVC, '4242 4242 4242 4242', '3782 822463 10005'];
    expect(withoutTokens.filter((c) => secrets.some((s) => c.includes(s)))).toEqual([]);
    const events = JSON.stringify(await page.evaluate(() => window.events));
    expect(secrets.filter((s) => events.includes(s))).toEqual([]);
  });
});

it('no card number or CVC appears in any service log', () => {
  expect(findCardDataInLogs(stack.logs(), [PAN, AMEX, LIVE_CARD], [CVC, AMEX_CVC])).toEqual([]);
});
