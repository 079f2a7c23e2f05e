/**
 * The hosted payment page (form sessions) in real headless Chromium. Origins on their own ports:
 * the API, the fields origin (where /pay/{id} lives), and a merchant's server that registers its
 * return and cancel URLs, records every request the browser makes to it, and serves a page that
 * tries to frame the hosted page.
 */
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { verifyFormSessionReturn } from '../../packages/sdk/src/formSessions';
import { launchChromium, SCREENSHOTS, startMerchantSite, type MerchantSite } from './browser';
import { apiClient, findCardDataInLogs, startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(180_000);

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const document: any;

const PAN = '4242424242424242';
const CVC = '046';
const EXPIRY_YEAR = new Date().getUTCFullYear() + 4;
const EXPIRY_TYPED = `12${String(EXPIRY_YEAR).slice(2)}`;

/** The merchant's site: a page that frames `framedUrl()` at /framer, and the shop's page at every other path (its return and cancel URLs). */
function merchantSite(framedUrl: () => string): Promise<MerchantSite> {
  return startMerchantSite((url) =>
    url.startsWith('/framer')
      ? `<!doctype html><html lang="en"><head><title>Framer</title></head><body><iframe title="pay" src="${framedUrl()}"></iframe></body></html>`
      : `<!doctype html><html lang="en"><head><title>Shop</title></head><body><main><h1>Back at the shop</h1></main></body></html>`,
  );
}

let redis: RedisServer;
let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let merchant: MerchantSite;
let fieldsOrigin = '';
let secretKey = '';
let signingSecret = '';
let framedUrl = '';
let api: ReturnType<typeof apiClient>;

const returnUrl = (): string => `${merchant.origin}/checkout/done`;
const cancelUrl = (): string => `${merchant.origin}/checkout/cancel`;

beforeAll(async () => {
  merchant = await merchantSite(() => framedUrl);
  redis = await startRedis();
  stack = await startStack(redis);
  fieldsOrigin = stack.fieldsUrl;
  secretKey = stack.createKey('shop').apiKey;
  api = apiClient(stack, secretKey);
  stack.cli(['return-urls', 'set', '--merchant', 'shop', returnUrl(), cancelUrl()]);
  signingSecret = stack.cli(['return-urls', 'secret', '--merchant', 'shop', '--mode', 'test']).trim();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 720, height: 820 } });
});

afterAll(async () => {
  await browser?.close();
  await merchant?.close();
  await stack?.stop();
  await redis?.stop();
});

async function createSession(body: Record<string, unknown> = { returnUrl: `${returnUrl()}?order=42&amount=1`, cancelUrl: cancelUrl() }) {
  const res = await api('POST', '/v1/form-sessions', body);
  expect(res.status).toBe(201);
  return res.body as { id: string; url: string; expiresAt: string; status: string };
}

async function typeCard(page: Page): Promise<void> {
  await page.getByLabel('Card number').pressSequentially(PAN);
  await page.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
  await page.getByLabel('Security code').pressSequentially(CVC);
}

describe('a completed hosted payment', () => {
  let session: { id: string; url: string; expiresAt: string; status: string };
  let page: Page;
  /** Every URL the browser requested, and the body of the card form's POST. */
  const urls: string[] = [];
  let cardPost: { url: string; body: string; contentType: string } | undefined;

  beforeAll(async () => {
    session = await createSession();
    page = await context.newPage();
    page.on('request', (req) => {
      urls.push(req.url());
      if (req.method() === 'POST' && req.url() === session.url) {
        cardPost = { url: req.url(), body: req.postData() ?? '', contentType: req.headers()['content-type'] ?? '' };
      }
    });
  });

  it('opens a session on the fields origin for 30 minutes', () => {
    expect(session.id).toMatch(/^fs_[A-Za-z0-9_-]{32}$/);
    expect(session.url).toBe(`${fieldsOrigin}/pay/${session.id}`);
    expect(session.status).toBe('open');
    const minutes = (Date.parse(session.expiresAt) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(29);
    expect(minutes).toBeLessThanOrEqual(30);
  });

  it('serves a full page that refuses framing and submits only to itself and the return origin', async () => {
    const res = await fetch(session.url);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`form-action 'self' ${merchant.origin}`);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('has no accessibility violation (axe-core)', async () => {
    await page.goto(session.url);
    const results = await new AxeBuilder({ page }).analyze();
    expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  });

  it('formats and checks the card as the card fields do, showing a Luhn error only after blur', async () => {
    const number = page.getByLabel('Card number');
    await number.pressSequentially('4242424242424241');
    expect(await number.inputValue()).toBe('4242 4242 4242 4241');
    expect(await page.locator('#cc-brand').textContent()).toBe('Visa');
    expect(await page.locator('#cc-number-error').textContent()).toBe('');
    await number.press('Tab');
    await expect(page.locator('#cc-number-error').textContent()).resolves.toBe('Your card number is invalid.');
    expect(await number.getAttribute('aria-invalid')).toBe('true');
    await number.fill('');
  });

  it('sends the shopper to exactly the registered return URL with a valid signature after 4242 4242 4242 4242', async () => {
    await typeCard(page);
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'hosted-page.png') });
    await Promise.all([page.waitForURL((u) => u.origin === merchant.origin), page.getByRole('button', { name: 'Pay' }).click()]);
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(returnUrl());
    expect(landed.searchParams.get('order')).toBe('42');
    expect(landed.searchParams.get('session')).toBe(session.id);
    expect(merchant.requests.filter((r) => r.startsWith('/checkout/done'))).toEqual([`${landed.pathname}${landed.search}`]);
    const verified = verifyFormSessionReturn(landed, { signingSecret });
    expect(verified).toMatchObject({ sessionId: session.id, status: 'completed' });
    expect(verified.query.toString()).toBe('order=42&amount=1');
    expect(() => verifyFormSessionReturn(landed, { signingSecret: signingSecret.replace(/.$/, (c) => (c === 'x' ? 'y' : 'x')) })).toThrow(
      /does not match/,
    );
    // The signature covers the merchant's own query too: an amount or order changed on the way back is caught.
    for (const [name, value] of [
      ['amount', '1000'],
      ['order', '43'],
      ['coupon', 'FREE'],
    ] as const) {
      const tampered = new URL(landed);
      tampered.searchParams.set(name, value);
      expect(() => verifyFormSessionReturn(tampered, { signingSecret })).toThrow(/does not match/);
    }
    // What a server behind a proxy has: the path and query, with the return URL's origin.
    expect(verifyFormSessionReturn(`${landed.pathname}${landed.search}`, { signingSecret, origin: merchant.origin }).sessionId).toBe(
      session.id,
    );
  });

  it('never put the card number in a URL: it travelled only in the POST body to the fields origin', () => {
    expect(urls.length).toBeGreaterThan(1);
    for (const url of urls) expect(url.replace(/\D/g, '')).not.toContain(PAN);
    expect(cardPost?.url).toBe(session.url);
    expect(cardPost?.contentType).toBe('application/x-www-form-urlencoded');
    expect(new URLSearchParams(cardPost?.body).get('cardnumber')?.replace(/\D/g, '')).toBe(PAN);
  });

  it('lets the merchant read the token and card with its secret key; the token is provisional until retained', async () => {
    const res = await api('GET', `/v1/form-sessions/${session.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: session.id,
      status: 'completed',
      card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: EXPIRY_YEAR },
    });
    expect(res.body.token).toMatch(/^tok\./);
    expect((await api('GET', `/v1/token/${res.body.token}`)).body.provisional).toBe(true);
    expect((await api('POST', `/v1/token/${res.body.token}/retain`)).body.provisional).toBe(false);
    const otherMerchant = apiClient(stack, stack.createKey('other-shop').apiKey);
    expect((await otherMerchant('GET', `/v1/form-sessions/${session.id}`)).status).toBe(404);
  });

  it('answers 410 to the page and to a replay of the completing POST, with no Location', async () => {
    const again = await page.goto(session.url);
    expect(again?.status()).toBe(410);
    expect(await page.locator('h1').textContent()).toBe('Payment page no longer available');
    expect(await page.locator('[role=alert]').textContent()).toMatch(/already been used/);
    const replay = await fetch(session.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: fieldsOrigin },
      body: cardPost?.body ?? '',
    });
    expect(replay.status).toBe(410);
    expect(replay.headers.get('location')).toBeNull();
    expect(replay.headers.get('x-tessera-error')).toBe('form_session_used');
  });
});

describe('the hosted page refuses', () => {
  it('to be framed by another origin: nothing of it loads', async () => {
    const session = await createSession();
    framedUrl = session.url;
    const page = await context.newPage();
    await page.goto(`${merchant.origin}/framer`);
    await page.waitForTimeout(1000);
    const framed = page.frames().filter((f) => f !== page.mainFrame());
    expect(framed).toHaveLength(1);
    expect(framed[0]!.url()).not.toBe(session.url);
    expect(await framed[0]!.locator('#card-form').count()).toBe(0);
    // The same session opened directly has its form: the refusal is the framing, not the session.
    await page.goto(session.url);
    expect(await page.locator('#card-form').count()).toBe(1);
    await page.close();
  });

  it('a form post without the session’s CSRF token, or from another origin', async () => {
    const session = await createSession();
    const form = (csrf: string) => new URLSearchParams({ csrf, cardnumber: PAN, 'exp-date': `12 / ${EXPIRY_YEAR}`, cvc: CVC }).toString();
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    const noToken = await fetch(session.url, { method: 'POST', redirect: 'manual', headers, body: form('forged') });
    expect(noToken.status).toBe(403);
    expect(noToken.headers.get('location')).toBeNull();
    const page = await context.newPage();
    await page.goto(session.url);
    const csrf = await page.locator('#card-form input[name=csrf]').inputValue();
    const crossSite = await fetch(session.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, origin: merchant.origin },
      body: form(csrf),
    });
    expect(crossSite.status).toBe(403);
    // A card the API's rules refuse: the page again, with the reason and the same session, nothing tokenized.
    const badCard = await fetch(session.url, {
      method: 'POST',
      redirect: 'manual',
      headers,
      body: form(csrf).replace(PAN, '4242424242424241'),
    });
    expect(badCard.status).toBe(400);
    expect(badCard.headers.get('location')).toBeNull();
    const html = await badCard.text();
    expect(html).toContain('role="alert" id="form-error">The card number fails the Luhn check.');
    expect(html).not.toContain('4242424242424241');
    // The session is still usable by its own page.
    expect((await api('GET', `/v1/form-sessions/${session.id}`)).body.status).toBe('open');
    await page.close();
  });

  it.each([
    'https://shop.test.evil/checkout/done',
    'https://shop.test@evil.test/checkout/done',
    '//evil.test/checkout/done',
    'https:\\\\evil.test/checkout/done',
    'https%3A%2F%2Fevil.test',
    'HTTP://127.0.0.1:PORT/checkout/done',
    'http://127.0.0.1:PORT/checkout/done/../../evil',
    'http://127.0.0.1:PORT/checkout/%2e%2e/evil',
    'http://127.0.0.1:PORT/checkout/done#frag',
    'http://127.0.0.1%3APORT/checkout/done',
    'http://127.0.0.1:PORT@evil.test/checkout/done',
    'http://127.0.0.1:PORT/checkout/do\tne',
    'http://127.0.0.1:PORT/checkout/done\n',
    'http://127.0.0.1:PORT/checkout/dоne',
    'http://evil.test/checkout/done',
  ])('return URL %j with 400 and no Location', async (raw) => {
    const url = raw.replace('PORT', new URL(merchant.origin).port);
    for (const body of [{ returnUrl: url }, { returnUrl: returnUrl(), cancelUrl: url }]) {
      const res = await api('POST', '/v1/form-sessions', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('return_url_not_registered');
      expect(res.headers.get('location')).toBeNull();
    }
  });

  it('a publishable key (403)', async () => {
    const created = JSON.parse(
      stack
        .cli(['create', '--kind', 'publishable', '--merchant', 'shop', '--mode', 'test', '--json', '--origin', merchant.origin])
        .trim()
        .split('\n')
        .pop() ?? '',
    ) as { apiKey: string };
    const res = await apiClient(stack, created.apiKey)('POST', '/v1/form-sessions', { returnUrl: returnUrl() });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('publishable_key_forbidden');
  });
});

describe('the cancel link', () => {
  it('sends the shopper to the cancel URL, signed as canceled, and uses the session', async () => {
    const session = await createSession();
    const page = await context.newPage();
    await page.goto(session.url);
    await Promise.all([page.waitForURL((u) => u.origin === merchant.origin), page.getByRole('button', { name: /Cancel/ }).click()]);
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(cancelUrl());
    expect(verifyFormSessionReturn(landed, { signingSecret })).toMatchObject({ sessionId: session.id, status: 'canceled' });
    expect((await api('GET', `/v1/form-sessions/${session.id}`)).body).toMatchObject({ status: 'canceled', token: null });
    await page.close();
  });
});

describe('an expired session', () => {
  it('answers 410 on its page and reads as expired', async () => {
    const replica = await stack.startGatewayReplica({ FORM_SESSION_TTL_SECONDS: '1' });
    const res = await apiClient({ baseUrl: replica.baseUrl } as Stack, secretKey)('POST', '/v1/form-sessions', { returnUrl: returnUrl() });
    expect(res.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const page = await fetch(res.body.url, { redirect: 'manual' });
    expect(page.status).toBe(410);
    expect(page.headers.get('x-tessera-error')).toBe('form_session_expired');
    expect(await page.text()).toMatch(/expired/);
    expect((await api('GET', `/v1/form-sessions/${res.body.id}`)).body.status).toBe('expired');
  });
});

describe('logs', () => {
  it('hold no card number or CVC from any hosted-page submission', () => {
    expect(findCardDataInLogs(stack.logs(), [PAN, '4242424242424241'], [CVC])).toEqual([]);
  });
});

describe('return URLs in the dashboard', () => {
  it('registers URLs for the operator’s merchant, refuses one with a query, and shows the signing secret of a mode', async () => {
    stack.createOperator('ops@shop.test', 'correct horse battery staple', 'shop');
    const page = await context.newPage();
    await page.goto(`${stack.adminUrl}/dashboard`);
    await page.getByLabel('Email').fill('ops@shop.test');
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByLabel('Password').press('Enter');
    const field = page.getByLabel('Return and cancel URLs');
    const valueIs = (expected: string) =>
      page.waitForFunction((text) => document.getElementById('return-urls').value === text, expected, { timeout: 15_000 });
    await valueIs(`${returnUrl()}\n${cancelUrl()}`);
    await field.fill(`${returnUrl()}\n${merchant.origin}/elsewhere?x=1`);
    await page.getByRole('button', { name: 'Save return URLs' }).click();
    await page.locator('#return-urls-error').waitFor({ state: 'visible' });
    expect(await page.locator('#return-urls-error').textContent()).toMatch(/must not contain a query/);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    await field.fill(`${returnUrl()}\n${cancelUrl()}\n${merchant.origin.replace('http:', 'HTTP:')}/elsewhere`);
    await page.getByRole('button', { name: 'Save return URLs' }).click();
    await valueIs(`${returnUrl()}\n${cancelUrl()}\n${merchant.origin}/elsewhere`);
    expect((await api('POST', '/v1/form-sessions', { returnUrl: `${merchant.origin}/elsewhere` })).status).toBe(201);
    await page.getByLabel('Signing secret for', { exact: true }).selectOption('test');
    await page.getByRole('button', { name: 'Show signing secret' }).click();
    await page.locator('#signing-secret').waitFor({ state: 'visible' });
    expect(await page.locator('#signing-secret-value').textContent()).toBe(signingSecret);
    const results = await new AxeBuilder({ page }).include('#return-urls-card').analyze();
    expect(results.violations.map((v) => v.id)).toEqual([]);
    await page.close();
  });
});
