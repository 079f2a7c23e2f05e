/**
 * Issue 22, items 1 and 2: what a publishable key and a shopper's browser can obtain. A publishable
 * key is public, so anything in its answers that is derived from the full card number (the BIN, the
 * merchant's keyed fingerprint) turns it into an oracle for the merchant's stored cards; and a
 * browser may attach a CVC only under a CVC session the merchant's server opened.
 *
 * Real Chromium drives every browser-reachable route with a publishable key (the card fields, the
 * CVC-only field, the hosted payment page and its return to the merchant), and the test records
 * every answer the browser got from Tessera, every message and port event the merchant page could
 * observe, and every URL the shopper was sent to. None holds a BIN, a fingerprint, or any other
 * value derived from the number but brand and last 4.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Response as BrowserResponse } from 'playwright-core';
import { launchChromium, SKIMMER_HOOKS, startMerchantSite, type MerchantSite } from './browser';
import { apiClient, ROOT, startRedis, startStack, TEST_CARDS, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const window: any;

const MANIFEST = path.join(ROOT, 'packages', 'js', 'dist', 'browser', 'manifest.json');
const EXPIRY_YEAR = new Date().getUTCFullYear() + 4;
const EXPIRY_TYPED = `12${String(EXPIRY_YEAR).slice(2)}`;
/** The one thing a browser may learn of a card beyond its token: what is printed on it and what the shopper typed. */
const BROWSER_TOKEN_FIELDS = ['brand', 'expiryMonth', 'expiryYear', 'last4', 'token'];
/** Field names of values derived from the full number that only secret keys may read. */
const SECRET_ONLY_FIELDS = ['bin', 'fingerprint', 'holderNameAvailable'];

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let merchant: MerchantSite;
let fieldsOrigin = '';
let integrity = '';
let publishableKey = '';
let asMerchant: ReturnType<typeof apiClient>;
/** The CVC session the merchant's "pay again" page hands to tessera.cvcField. */
let cvcSession: unknown;

/** The merchant's checkout pages: skimmer hooks first (they record what the page can observe), then tessera.js. */
function merchantPage(url: string): string {
  const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>${SKIMMER_HOOKS}</head><body><main>`;
  const script = `<script src="${fieldsOrigin}/js/v1/tessera.js" integrity="${integrity}" crossorigin="anonymous"></script>`;
  const collect = `window.events = [];
['ready', 'change'].forEach(function (name) { field.on(name, function (e) { window.events.push(Object.assign({ type: name }, e)); }); });`;
  if (url.startsWith('/checkout')) {
    return `${head}<div id="card"></div></main>${script}<script>
var field = Tessera(${JSON.stringify(publishableKey)}).cardFields({ container: '#card', holderName: true });
${collect}
window.pay = function () { return field.tokenize().then(function (r) { window.result = r; }, function (e) { window.result = { error: e.code }; }); };
</script></body></html>`;
  }
  if (url.startsWith('/pay-again')) {
    return `${head}<div id="cvc"></div></main>${script}<script>
var field = Tessera(${JSON.stringify(publishableKey)}).cvcField({ cvcSession: ${JSON.stringify(cvcSession)}, container: '#cvc' });
${collect}
window.pay = function () { return field.submit().then(function (r) { window.result = r; }, function (e) { window.result = { error: e.code }; }); };
</script></body></html>`;
  }
  return `${head}<h1>Back at the shop</h1></main></body></html>`;
}

beforeAll(async () => {
  integrity = (JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Record<string, { integrity: string }>)['tessera.js']!.integrity;
  redis = await startRedis();
  stack = await startStack(redis);
  fieldsOrigin = stack.fieldsUrl;
  merchant = await startMerchantSite(merchantPage);
  asMerchant = apiClient(stack, stack.createKey('shop').apiKey);
  const args = ['create', '--kind', 'publishable', '--merchant', 'shop', '--mode', 'test', '--json', '--origin', merchant.origin];
  publishableKey = (JSON.parse(stack.cli(args).trim().split('\n').pop() ?? '') as { apiKey: string }).apiKey;
  stack.cli(['return-urls', 'set', '--merchant', 'shop', `${merchant.origin}/done`]);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await merchant?.close();
  await stack?.stop();
  await redis?.stop();
});

/** A server-made token of the merchant (its secret key), as a returning shopper's stored card is. */
async function storedCard(number: string): Promise<{ token: string; fingerprint: string; bin: string }> {
  const created = await asMerchant('POST', '/v1/token', { number, expiryMonth: 12, expiryYear: EXPIRY_YEAR });
  expect(created.status).toBe(201);
  return created.body as { token: string; fingerprint: string; bin: string };
}

/** What only a secret key may read of a token: the values a browser must never see. */
async function secretOnlyValues(token: string): Promise<string[]> {
  const record = (await asMerchant('GET', `/v1/token/${token}`)).body as { bin: string; fingerprint: string };
  expect(record.fingerprint).toMatch(/^[A-Za-z0-9_-]{22,}$/);
  return [record.bin, record.fingerprint];
}

/** A request as the card-fields iframe sends it: publishable key, fields Origin, the merchant page as parent. */
function fromFields(route: string, body: unknown): Promise<Response> {
  return fetch(`${stack.fieldsUrl}${route}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': publishableKey,
      origin: fieldsOrigin,
      'x-tessera-parent-origin': merchant.origin,
    },
    body: JSON.stringify(body),
  });
}

describe('every answer a browser gets, in Chromium', () => {
  let context: BrowserContext;
  /** Every answer from the API or the fields origin, to any frame: URL, status, Location and (for JSON and HTML) the body. */
  const answers: Array<{ url: string; status: number; location: string; body: string; json: unknown }> = [];
  /** Every URL a frame of the shopper's browser navigated to. */
  const visited: string[] = [];
  /** What the merchant's page observed (messages, port events, fetch/XHR) and its results, per page. */
  const observed: string[] = [];
  /** The tokens made or touched, whose secret-only values the browser must not have seen. */
  const tokens: string[] = [];

  function watch(page: Page): void {
    page.on('framenavigated', (frame) => visited.push(frame.url()));
    page.on('response', (response: BrowserResponse) => {
      const url = response.url();
      if (!url.startsWith(stack.baseUrl) && !url.startsWith(fieldsOrigin)) return;
      const contentType = response.headers()['content-type'] ?? '';
      const readable = /json|html/.test(contentType) && (response.status() < 300 || response.status() >= 400);
      void (readable ? response.text() : Promise.resolve('')).then(
        (body) => answers.push({ url, status: response.status(), location: response.headers().location ?? '', body, json: jsonOf(body) }),
        () => answers.push({ url, status: response.status(), location: response.headers().location ?? '', body: '', json: undefined }),
      );
    });
  }

  async function run(path: string, act: (page: Page) => Promise<void>): Promise<Record<string, unknown>> {
    const page = await context.newPage();
    watch(page);
    await page.goto(`${merchant.origin}${path}`);
    await page.waitForFunction(() => window.events.some((e: any) => e.type === 'ready'), undefined, { timeout: 30_000 });
    const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`));
    if (!frame) throw new Error('card fields frame not found');
    await act(page);
    await page.evaluate(() => window.pay());
    const result = (await page.evaluate(() => window.result)) as Record<string, unknown>;
    const seen = (await page.evaluate(() => ({ captured: window.captured, events: window.events }))) as {
      captured: string[];
      events: unknown[];
    };
    observed.push(...seen.captured, JSON.stringify(seen.events), JSON.stringify(result));
    await page.close();
    return result;
  }

  beforeAll(async () => {
    context = await browser.newContext();
  });
  afterAll(async () => {
    await context?.close();
  });

  it('card fields: the page gets the token, brand, last 4 and expiry only', async () => {
    const result = await run('/checkout', async (page) => {
      const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`))!;
      await frame.getByLabel('Card number').pressSequentially(TEST_CARDS.mastercard);
      await frame.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
      await frame.getByLabel('Security code').pressSequentially('123');
      await frame.getByLabel('Name on card').pressSequentially('Ada Lovelace');
    });
    expect(result).toEqual({
      token: expect.stringMatching(/^tok\./),
      card: { brand: 'mastercard', last4: '4444', expiryMonth: 12, expiryYear: EXPIRY_YEAR },
    });
    tokens.push(result.token as string);
    const tokenize = answers.find((a) => a.url === `${stack.fieldsUrl}/v1/browser/tokens` && a.status === 201);
    expect(Object.keys(tokenize?.json ?? {}).sort()).toEqual(BROWSER_TOKEN_FIELDS);
  });

  it('CVC-only field under a CVC session: the page gets the token alone, and the CVC is attached', async () => {
    const stored = await storedCard(TEST_CARDS.visa);
    tokens.push(stored.token);
    const opened = await asMerchant('POST', `/v1/token/${stored.token}/cvc-sessions`);
    expect(opened.status).toBe(201);
    cvcSession = opened.body;
    const result = await run('/pay-again', async (page) => {
      const frame = page.frames().find((f) => f.url().startsWith(`${fieldsOrigin}/fields/v1/card`))!;
      await frame.getByLabel('Security code').pressSequentially('321');
    });
    expect(result).toEqual({ token: stored.token });
    const attach = answers.find((a) => a.url === `${stack.fieldsUrl}/v1/browser/tokens/${stored.token}/cvc` && a.status === 200);
    expect(attach?.json).toEqual({ token: stored.token, cvvAvailable: true });
    expect((await asMerchant('GET', `/v1/token/${stored.token}`)).body.cvvAvailable).toBe(true);
  });

  it('hosted payment page: its pages and the return to the merchant carry nothing derived from the number', async () => {
    const session = await asMerchant('POST', '/v1/form-sessions', { returnUrl: `${merchant.origin}/done?order=7` });
    expect(session.status).toBe(201);
    const page = await context.newPage();
    watch(page);
    await page.goto(session.body.url as string);
    await page.getByLabel('Card number').pressSequentially(TEST_CARDS.amex);
    await page.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
    await page.getByLabel('Security code').pressSequentially('4321');
    await Promise.all([page.waitForURL((u) => u.origin === merchant.origin), page.getByRole('button', { name: 'Pay' }).click()]);
    visited.push(page.url());
    await page.close();
    const completed = await asMerchant('GET', `/v1/form-sessions/${session.body.id}`);
    expect(completed.body.status).toBe('completed');
    tokens.push(completed.body.token as string);
  });

  it('no answer, message, event or URL the browser saw holds a BIN, a fingerprint or another secret-only field', async () => {
    expect(tokens).toHaveLength(3);
    const forbidden = (await Promise.all(tokens.map(secretOnlyValues))).flat();
    // The three BINs, as their first six digits.
    expect(forbidden).toEqual(expect.arrayContaining(['555555', '424242', '378282']));
    const texts = [...answers.flatMap((a) => [a.url, a.location, a.body]), ...visited, ...observed, ...merchant.requests];
    expect(answers.length).toBeGreaterThan(3);
    expect(observed.some((text) => text.includes('tessera:hello'))).toBe(true);
    const leaks = texts.flatMap((text) => [
      ...forbidden.filter((value) => text.includes(value)).map((value) => `${value} in ${text.slice(0, 120)}`),
      ...SECRET_ONLY_FIELDS.filter((name) => new RegExp(`["'?&]${name}["'=]`).test(text)).map((name) => `${name} in ${text.slice(0, 120)}`),
    ]);
    expect(leaks).toEqual([]);
  });
});

describe('a publishable key (issue 22, finding 1)', () => {
  it('gets no fingerprint or BIN for a card it tokenizes, even one the merchant stored; a secret key still reads them', async () => {
    const stored = await storedCard(TEST_CARDS.mastercard);
    const res = await fromFields('/v1/browser/tokens', { number: TEST_CARDS.mastercard, expiryMonth: 12, expiryYear: EXPIRY_YEAR });
    expect(res.status).toBe(201);
    const answer = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(answer).sort()).toEqual(BROWSER_TOKEN_FIELDS);
    expect(JSON.stringify(answer)).not.toContain(stored.fingerprint);
    // The provisional token's fingerprint is there for the merchant's server: the same card, the same value.
    const read = await asMerchant('GET', `/v1/token/${answer.token as string}`);
    expect(read.body).toMatchObject({ provisional: true, fingerprint: stored.fingerprint, bin: '555555' });
  });
});

describe('the browser CVC route (issue 22, finding 2)', () => {
  const attach = (token: string, body: Record<string, unknown>) => fromFields(`/v1/browser/tokens/${token}/cvc`, body);
  const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

  it('refuses a publishable key without a CVC session, for a server-made and a retained token, and leaves the CVV alone', async () => {
    const serverMade = await storedCard(TEST_CARDS.visa);
    const made = await fromFields('/v1/browser/tokens', { number: TEST_CARDS.visa, expiryMonth: 12, expiryYear: EXPIRY_YEAR });
    const retained = ((await made.json()) as { token: string }).token;
    expect((await asMerchant('POST', `/v1/token/${retained}/retain`)).status).toBe(200);
    for (const token of [serverMade.token, retained]) {
      const res = await attach(token, { cvv: '999' });
      expect(res.status).toBe(403);
      expect(await codeOf(res)).toBe('cvc_session_required');
      expect((await asMerchant('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);
    }
  });

  it('refuses an unknown session, or one opened for another token, as not found', async () => {
    const { token } = await storedCard(TEST_CARDS.visa);
    const other = await storedCard(TEST_CARDS.visa);
    const otherSession = (await asMerchant('POST', `/v1/token/${other.token}/cvc-sessions`)).body as { secret: string };
    for (const cvcSession of [`cvcs_${'A'.repeat(43)}`, otherSession.secret]) {
      const res = await attach(token, { cvv: '999', cvcSession });
      expect(res.status).toBe(404);
      expect(await codeOf(res)).toBe('cvc_session_not_found');
    }
    expect((await asMerchant('GET', `/v1/token/${token}`)).body.cvvAvailable).toBe(false);
  });

  it('lets one of two concurrent attaches under one session through; the other is told it was used', async () => {
    const { token } = await storedCard(TEST_CARDS.visa);
    const { secret } = (await asMerchant('POST', `/v1/token/${token}/cvc-sessions`)).body as { secret: string };
    const answers = await Promise.all([
      attach(token, { cvv: '111', cvcSession: secret }),
      attach(token, { cvv: '222', cvcSession: secret }),
    ]);
    expect(answers.map((res) => res.status).sort()).toEqual([200, 410]);
    const used = answers.find((res) => res.status === 410)!;
    expect(await codeOf(used)).toBe('cvc_session_used');
  });

  it('is opened by secret keys only', async () => {
    const { token } = await storedCard(TEST_CARDS.visa);
    const res = await apiClient(stack, publishableKey)('POST', `/v1/token/${token}/cvc-sessions`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('publishable_key_forbidden');
    const otherMerchant = apiClient(stack, stack.createKey('other-shop').apiKey);
    expect((await otherMerchant('POST', `/v1/token/${token}/cvc-sessions`)).status).toBe(404);
  });
});

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
