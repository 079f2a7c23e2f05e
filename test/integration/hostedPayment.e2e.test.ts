/**
 * Issue 26, item 3: a hosted page that completes a payment, in real headless Chromium. The real
 * services (the fields service dialing the proxy for completion calls), the sandbox PSP, and a
 * merchant's server on loopback that registers its return, cancel and completion URLs, and on
 * each completion call verifies Tessera's signature, retains the token and charges the sandbox PSP
 * through /v1/proxy with Idempotency-Key `${formSession}:${attempt}` (the Node SDK, as a merchant
 * would write it). Its return page reads the session back with its secret key.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Tessera } from '../../packages/sdk/src/client';
import { verifyCompletionSignature, type FormSessionCompletion } from '../../packages/sdk/src/completionSignature';
import { verifyFormSessionReturn } from '../../packages/sdk/src/formSessions';
import { launchChromium, SCREENSHOTS } from './browser';
import {
  apiClient,
  findCardDataInLogs,
  startRedis,
  startSandboxPsp,
  startStack,
  type ManagedProcess,
  type RedisServer,
  type Stack,
} from './harness';

jest.setTimeout(180_000);

const DECLINED_CARD = '4000000000000002';
const GOOD_CARD = '4242424242424242';
const CVC = '046';
const EXPIRY_TYPED = `12${String(new Date().getUTCFullYear() + 4).slice(2)}`;
/** The fields service's COMPLETION_TIMEOUT_MS here; the slow merchant answers well after it. */
const COMPLETION_TIMEOUT_MS = 2500;
const SLOW_ANSWER_MS = 6000;

let redis: RedisServer;
let stack: Stack;
let sandbox: ManagedProcess;
let pspUrl = '';
let browser: Browser;
let context: BrowserContext;
let secretKey = '';
let signingSecret = '';
let api: ReturnType<typeof apiClient>;

/** The merchant's server: what it was called with, what it charged, and the sessions it answers slowly. */
const merchant = {
  origin: '',
  server: undefined as http.Server | undefined,
  completions: [] as FormSessionCompletion[],
  charges: [] as { idempotencyKey: string; pspStatus: number }[],
  slow: new Set<string>(),
  slowAnswered: 0,
};
const returnUrl = (): string => `${merchant.origin}/checkout/done`;
const cancelUrl = (): string => `${merchant.origin}/checkout/cancel`;
const completionUrl = (): string => `${merchant.origin}/checkout/complete`;
const logoUrl = (): string => `${merchant.origin}/logo.svg`;

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="80" height="40"><rect width="80" height="40" rx="6" fill="#1d3557"/><text x="40" y="26" font-size="16" text-anchor="middle" fill="#fff">MUGS</text></svg>`;

const html = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main>${body}</main></body></html>`;

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** POST /checkout/complete: the merchant's completion endpoint, as docs/api.md tells a merchant to write it. */
async function complete(tessera: Tessera, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const raw = await readBody(req);
  let call: FormSessionCompletion;
  try {
    call = verifyCompletionSignature(raw, req.headers['tessera-signature'], signingSecret);
  } catch {
    res.writeHead(400).end();
    return;
  }
  merchant.completions.push(call);
  const card = await tessera.tokens.retain(call.token);
  const idempotencyKey = `${call.formSession}:${call.attempt}`;
  const psp = await tessera.proxy.forward(
    {
      method: 'post',
      token: card.token,
      pspUrl,
      pspHeaders: { 'Content-Type': 'application/json' },
      pspBody: JSON.stringify({
        amount: call.amount,
        currency: call.currency,
        card: { number: '[CARD_NUMBER]', exp_month: '[CARD_EXPIRY_MONTH]', exp_year: '[CARD_EXPIRY_YEAR]', cvc: '[CARD_CVV]' },
      }),
    },
    { idempotencyKey },
  );
  merchant.charges.push({ idempotencyKey, pspStatus: psp.status });
  const answer = psp.json<{ status?: string; error?: { message?: string } }>();
  if (merchant.slow.has(call.formSession)) {
    // Charged, but the answer comes after Tessera stopped waiting: the outcome is unknown to it.
    await new Promise((resolve) => setTimeout(resolve, SLOW_ANSWER_MS));
    merchant.slowAnswered += 1;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify(
      psp.status === 200 && answer.status === 'succeeded'
        ? { outcome: 'succeeded' }
        : { outcome: 'declined', message: answer.error?.message ?? 'The card was declined.' },
    ),
  );
}

/** GET /checkout/done: the shop's return page checks the signature and reads the session with its secret key. */
async function returned(tessera: Tessera, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const landed = verifyFormSessionReturn(req.url ?? '', { signingSecret, origin: merchant.origin });
  const session = await tessera.formSessions.retrieve(landed.sessionId);
  const paid = session.payment?.status === 'succeeded';
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(
    html(
      'Order',
      `<h1>${paid ? 'Thank you, payment received' : 'Payment status: ' + (session.payment?.status ?? 'none')}</h1>` +
        `<p id="outcome">${session.payment?.status ?? 'none'}</p>` +
        `<p>${(session.amount ?? 0) / 100} ${session.currency} with ${session.card?.brand} ending ${session.card?.last4} ` +
        `after ${session.payment?.attempts} attempt(s)</p>`,
    ),
  );
}

async function startMerchant(tessera: Tessera): Promise<void> {
  merchant.server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const answer = async () => {
      if (req.method === 'POST' && url === '/checkout/complete') return complete(tessera, req, res);
      if (url.startsWith('/checkout/done')) return returned(tessera, req, res);
      if (url === '/logo.svg') return void res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html('Shop', '<h1>Back at the shop</h1>'));
    };
    answer().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => merchant.server?.listen(0, '127.0.0.1', resolve));
  merchant.origin = `http://127.0.0.1:${(merchant.server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis, { serviceEnv: { fields: { COMPLETION_TIMEOUT_MS: String(COMPLETION_TIMEOUT_MS) } } });
  const psp = await startSandboxPsp();
  sandbox = psp.sandbox;
  pspUrl = psp.chargesUrl;
  secretKey = stack.createKey('mugs').apiKey;
  api = apiClient(stack, secretKey);
  await startMerchant(new Tessera(secretKey, { baseUrl: stack.baseUrl }));
  stack.cli(['return-urls', 'set', '--merchant', 'mugs', returnUrl(), cancelUrl(), completionUrl()]);
  signingSecret = stack.cli(['return-urls', 'secret', '--merchant', 'mugs', '--mode', 'test']).trim();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 720, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  merchant.server?.closeAllConnections();
  await new Promise<void>((resolve) => (merchant.server ? merchant.server.close(() => resolve()) : resolve()));
  await sandbox?.stop();
  await stack?.stop();
  await redis?.stop();
});

interface SessionJson {
  id: string;
  url: string;
  status: string;
  payment: { status: string; attempts: number; declineMessage: string | null } | null;
}

async function createSession(extra: Record<string, unknown> = {}): Promise<SessionJson> {
  const res = await api('POST', '/v1/form-sessions', {
    returnUrl: `${returnUrl()}?order=7`,
    cancelUrl: cancelUrl(),
    completionUrl: completionUrl(),
    amount: 1234,
    currency: 'eur',
    merchantName: 'Mug Shop',
    logoUrl: logoUrl(),
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body as SessionJson;
}

async function typeCard(page: Page, number: string): Promise<void> {
  await page.locator('#cc-number').pressSequentially(number);
  await page.locator('#cc-exp').pressSequentially(EXPIRY_TYPED);
  await page.locator('#cc-csc').pressSequentially(CVC);
}

async function expectNoAxeViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

describe('the amount, the merchant and the button', () => {
  it.each([
    ['en', '€12.34', 'Pay €12.34', 'Card number'],
    ['de', '12,34 €', '12,34 € bezahlen', 'Kartennummer'],
  ])(
    'are shown in %s, the card inputs too, with the logo loaded from its own origin only, and no axe violation',
    async (locale, amount, button, numberLabel) => {
      const session = await createSession({ locale });
      const page = await context.newPage();
      const response = await page.goto(session.url);
      expect(response?.headers()['content-security-policy']).toContain(`img-src ${merchant.origin}`);
      expect(await page.locator('html').getAttribute('lang')).toBe(locale);
      expect((await page.locator('#pay-amount').textContent())?.replace(/\s/g, ' ')).toContain(amount);
      expect((await page.locator('#pay-submit').textContent())?.replace(/\s/g, ' ')).toBe(button);
      expect(await page.locator('.merchant-name').textContent()).toBe('Mug Shop');
      await expect(page.getByLabel(numberLabel, { exact: true }).count()).resolves.toBe(1);
      await page.waitForFunction(() => (document.querySelector('img.logo') as { naturalWidth: number } | null)?.naturalWidth === 80);
      await expectNoAxeViolations(page);
      await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, `hosted-amount-${locale}.png`) });
      await page.close();
    },
  );
});

describe('a declined card, then another card in the same session', () => {
  let session: SessionJson;
  let page: Page;

  beforeAll(async () => {
    session = await createSession();
    page = await context.newPage();
    await page.goto(session.url);
  });
  afterAll(() => page.close());

  it('shows the decline on the page, keeps the session open, and has no axe violation', async () => {
    await typeCard(page, DECLINED_CARD);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Pay €12.34' }).click()]);
    await page.locator('#form-error').waitFor();
    expect(await page.locator('#form-error').textContent()).toBe('Your card was declined.');
    expect(await page.locator('#cc-number').inputValue()).toBe('');
    await page.locator('main').screenshot({ path: path.join(SCREENSHOTS, 'hosted-decline.png') });
    await expectNoAxeViolations(page);
    const read = await api('GET', `/v1/form-sessions/${session.id}`);
    expect(read.body).toMatchObject({ status: 'open', payment: { status: 'declined', attempts: 1 } });
  });

  it('takes 4242 4242 4242 4242 as attempt 2, charges it once, and sends the shopper back with payment=succeeded', async () => {
    await typeCard(page, GOOD_CARD);
    await Promise.all([page.waitForURL((u) => u.origin === merchant.origin), page.getByRole('button', { name: 'Pay €12.34' }).click()]);
    const landed = verifyFormSessionReturn(page.url(), { signingSecret });
    expect(landed).toMatchObject({ sessionId: session.id, status: 'completed', payment: 'succeeded' });
    expect(landed.query.toString()).toBe('order=7');
    await page.locator('#outcome').waitFor();
    expect(await page.locator('#outcome').textContent()).toBe('succeeded');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'hosted-retry-succeeded.png') });
    const calls = merchant.completions.filter((c) => c.formSession === session.id);
    expect(calls.map((c) => [c.attempt, c.amount, c.currency, c.card.last4])).toEqual([
      [1, 1234, 'eur', '0002'],
      [2, 1234, 'eur', '4242'],
    ]);
    expect(merchant.charges.filter((c) => c.idempotencyKey.startsWith(session.id))).toEqual([
      { idempotencyKey: `${session.id}:1`, pspStatus: 402 },
      { idempotencyKey: `${session.id}:2`, pspStatus: 200 },
    ]);
    const read = await api('GET', `/v1/form-sessions/${session.id}`);
    expect(read.body).toMatchObject({
      status: 'completed',
      amount: 1234,
      currency: 'eur',
      payment: { status: 'succeeded', attempts: 2 },
      card: { last4: '4242' },
    });
  });

  it('then answers 410 with a plain link back to the cancel URL in the shop’s name, with no axe violation', async () => {
    const used = await page.goto(session.url);
    expect(used?.status()).toBe(410);
    const link = page.getByRole('link', { name: 'Return to Mug Shop' });
    expect(await link.getAttribute('href')).toBe(cancelUrl());
    await expectNoAxeViolations(page);
    await Promise.all([page.waitForURL(cancelUrl()), link.click()]);
  });
});

describe('an expired session', () => {
  it('links its page back to the cancel URL', async () => {
    const replica = await stack.startGatewayReplica({ FORM_SESSION_TTL_SECONDS: '1' });
    const res = await apiClient({ baseUrl: replica.baseUrl } as Stack, secretKey)('POST', '/v1/form-sessions', {
      returnUrl: returnUrl(),
      cancelUrl: cancelUrl(),
      merchantName: 'Mug Shop',
      locale: 'nl',
    });
    expect(res.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const page = await context.newPage();
    const expired = await page.goto(res.body.url);
    expect(expired?.status()).toBe(410);
    expect(await page.getByRole('link', { name: 'Terug naar Mug Shop' }).getAttribute('href')).toBe(cancelUrl());
    await expectNoAxeViolations(page);
    await page.close();
  });
});

describe('a fields service without PROXY_ADDR', () => {
  it('says payments are unavailable on a page with a completion URL, links back to the shop, and takes no card', async () => {
    const replica = await stack.startFieldsReplica({ PROXY_ADDR: '' });
    const session = await createSession();
    const page = await context.newPage();
    const shown = await page.goto(`${replica.baseUrl}/pay/${session.id}`);
    expect(shown?.status()).toBe(503);
    expect(shown?.headers()['x-tessera-error']).toBe('payments_unavailable');
    expect(await page.locator('#card-form').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Return to Mug Shop' }).getAttribute('href')).toBe(cancelUrl());
    await expectNoAxeViolations(page);
    await page.close();
    // The same session on a fields service that has the proxy is still open and works.
    expect((await api('GET', `/v1/form-sessions/${session.id}`)).body).toMatchObject({ status: 'open', payment: null });
  });
});

describe('a completion endpoint that answers too late', () => {
  it('sends the shopper on with payment=unknown and never lets the session send a second card', async () => {
    const session = await createSession();
    merchant.slow.add(session.id);
    const page = await context.newPage();
    let cardPost = '';
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url() === session.url) cardPost = req.postData() ?? '';
    });
    await page.goto(session.url);
    await typeCard(page, GOOD_CARD);
    // What the button and the status line say while the merchant is asked (the page is gone by the time we could look).
    const seen: string[] = [];
    page.on('console', (msg) => seen.push(msg.text()));
    await page.evaluate(() => {
      const button = document.querySelector('#pay-submit') as { textContent: string };
      const status = document.querySelector('#pay-status') as { textContent: string };
      new MutationObserver(() => console.log(`busy: ${button.textContent} | ${status.textContent}`)).observe(
        document.querySelector('main'),
        {
          subtree: true,
          childList: true,
          characterData: true,
        },
      );
    });
    const started = Date.now();
    await Promise.all([page.waitForURL((u) => u.origin === merchant.origin), page.getByRole('button', { name: 'Pay €12.34' }).click()]);
    expect(seen).toContain('busy: Processing payment… | Processing payment…');
    expect(Date.now() - started).toBeLessThan(SLOW_ANSWER_MS);
    expect(verifyFormSessionReturn(page.url(), { signingSecret })).toMatchObject({ status: 'completed', payment: 'unknown' });
    expect((await api('GET', `/v1/form-sessions/${session.id}`)).body).toMatchObject({
      status: 'completed',
      payment: { status: 'unknown', attempts: 1 },
    });
    // The shopper goes back and submits again: the page is used, nothing is sent to the merchant.
    const replay = await fetch(session.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: cardPost,
    });
    expect(replay.status).toBe(410);
    expect(replay.headers.get('x-tessera-error')).toBe('form_session_used');
    await new Promise((resolve) => setTimeout(resolve, SLOW_ANSWER_MS));
    expect(merchant.completions.filter((c) => c.formSession === session.id)).toHaveLength(1);
    expect(merchant.charges.filter((c) => c.idempotencyKey.startsWith(session.id))).toHaveLength(1);
    await page.close();
  });
});

describe('creating a session', () => {
  it('answers the first session again for a retried Idempotency-Key', async () => {
    const body = { returnUrl: returnUrl(), amount: 500, currency: 'usd' };
    const first = await api('POST', '/v1/form-sessions', body, { 'idempotency-key': 'order-900' });
    const retried = await api('POST', '/v1/form-sessions', body, { 'idempotency-key': 'order-900' });
    expect(first.status).toBe(201);
    expect(retried.body.id).toBe(first.body.id);
  });
});

describe('the form sessions list', () => {
  it('names the merchant’s sessions newest first, filtered by status', async () => {
    const newest = await createSession();
    const page = await api('GET', '/v1/form-sessions?limit=2');
    expect(page.status).toBe(200);
    expect(page.body.data[0].id).toBe(newest.id);
    expect(page.body).toMatchObject({ object: 'list', hasMore: true });
    const completed = await api('GET', '/v1/form-sessions?status=completed&limit=100');
    expect(completed.body.data.length).toBeGreaterThanOrEqual(2);
    expect(completed.body.data.every((s: SessionJson) => s.status === 'completed')).toBe(true);
  });
});

describe('logs', () => {
  it('hold no card number or CVC from any submission', () => {
    expect(findCardDataInLogs([stack.logs(), sandbox.output].join('\n'), [GOOD_CARD, DECLINED_CARD], [CVC])).toEqual([]);
  });
});

/** The page's globals, for functions evaluated inside the browser (tests compile without the DOM lib). */
declare const document: { querySelector(selector: string): any };
declare const MutationObserver: any;
