import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TesseraError } from '@tessera/common';
import type { CompletionCall, CompletionCallAnswer, TokenizeRequest } from '@tessera/protos';
import {
  formSigningSecret,
  newCsrfToken,
  newFormSessionId,
  RedisEventStore,
  RedisFormSessionStore,
  type FormSessionDisplay,
  type FormSessionRecord,
} from '@tessera/merchant-data';
import { verifyCompletionSignature, verifyFormSessionReturn } from '@tessera/sdk';
import type { HostedPageDeps } from '../app/hostedPage';
import type { MerchantCompletions } from '../app/ports';
import { aTokenRecord, captureLogger, startApp, TEST_PEPPER, type RunningApp, type TestResponse } from '../testing/fixtures';
import { useFieldsRedis } from '../testing/redis';
import { loadCardFieldsAssets } from './cardFieldsPage';
import { createFieldsApp } from './fieldsApp';

const SHOP = 'https://shop.example';
const RETURN_URL = `${SHOP}/done`;
const CANCEL_URL = `${SHOP}/cancel`;
const COMPLETION_URL = `${SHOP}/complete`;
const SECRET = formSigningSecret(TEST_PEPPER, 'shop', 'test');
/** A token id shaped like the vault's (`tok.` and 128 bits or more). */
const tokenNumbered = (n: number): string => `tok.AbCdEfGhIjKlMnOpQrSt${n}`;

function assetsDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-hosted-'));
  fs.writeFileSync(path.join(dir, 'fields.js'), 'console.log("fields")');
  fs.writeFileSync(path.join(dir, 'hosted.js'), 'console.log("hosted")');
  fs.writeFileSync(path.join(dir, 'tessera.js'), 'window.Tessera = function () {};');
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ 'tessera.js': { integrity: 'sha384-x' } }));
  return dir;
}

/** The merchant's completion endpoint as the proxy would reach it: answers from a script, records every call. */
class Merchant implements MerchantCompletions {
  calls: CompletionCall[] = [];
  answers: (CompletionCallAnswer | Error)[] = [];
  async callCompletion(request: CompletionCall): Promise<CompletionCallAnswer> {
    this.calls.push(request);
    const next = this.answers.shift() ?? new Error('no answer scripted');
    if (next instanceof Error) throw next;
    return next;
  }
  close(): void {}
}

const answer = (status: number, body: unknown): CompletionCallAnswer => ({
  status,
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});

describe('the hosted page with an amount and a completion URL', () => {
  const env = useFieldsRedis();
  let sessions: RedisFormSessionStore;
  let merchant: Merchant;
  let tokenized: TokenizeRequest[];
  let app: RunningApp;
  let recorder: HostedPageDeps['events'] extends infer E ? (E extends { recorder: infer R } ? R : never) : never;
  const assets = loadCardFieldsAssets(assetsDir());

  async function start(withProxy = true): Promise<void> {
    const formSessions: HostedPageDeps = {
      sessions,
      vault: {
        tokenize: async (request: TokenizeRequest) => {
          tokenized.push(request);
          return aTokenRecord({ token: tokenNumbered(tokenized.length), last4: request.number.slice(-4), provisional: true });
        },
      },
      pepper: TEST_PEPPER,
      fieldsOrigin: 'https://fields.example',
      now: () => new Date(),
      completionTimeoutMs: 2000,
      events: { recorder },
      ...(withProxy ? { completions: merchant } : {}),
    };
    app = await startApp(createFieldsApp({ assets, lookupKey: async () => undefined, logger: captureLogger().logger, formSessions }));
  }

  beforeEach(async () => {
    sessions = new RedisFormSessionStore(env.redis);
    recorder = new RedisEventStore(env.redis);
    merchant = new Merchant();
    tokenized = [];
    await start();
  });
  afterEach(() => app.close());

  async function openSession(
    display: Partial<FormSessionDisplay> = {},
    overrides: Partial<FormSessionRecord> = {},
  ): Promise<FormSessionRecord> {
    const now = new Date();
    const record: FormSessionRecord = {
      id: newFormSessionId(),
      merchantId: 'shop',
      mode: 'test',
      keyId: 'key_shop',
      returnUrl: RETURN_URL,
      cancelUrl: CANCEL_URL,
      csrfToken: newCsrfToken(),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 900_000).toISOString(),
      status: 'open',
      finishedAt: null,
      result: null,
      terms: { amount: 1234, currency: 'eur', completionUrl: COMPLETION_URL },
      display: { merchantName: 'Mug <Shop>', logoUrl: 'https://cdn.shop.example/logo.png', submitLabel: null, locale: 'en', ...display },
      payment: null,
      ...overrides,
    };
    await sessions.create(record);
    return record;
  }

  function pay(session: FormSessionRecord, number = '4242424242424242'): Promise<TestResponse> {
    const body = new URLSearchParams({
      csrf: session.csrfToken,
      cardnumber: number,
      'exp-date': `12 / ${String((new Date().getUTCFullYear() + 3) % 100)}`,
      cvc: '123',
    }).toString();
    return app.request('POST', `/pay/${session.id}`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body,
    });
  }

  const page = (session: FormSessionRecord) => app.request('GET', `/pay/${session.id}`);

  it('shows the amount in the page’s locale, the merchant’s name (escaped) and logo, allowed by the CSP for that origin only', async () => {
    const res = await page(await openSession());
    const html = res.body.toString();
    expect(res.status).toBe(200);
    expect(html).toContain('<p class="merchant-name">Mug &lt;Shop&gt;</p>');
    expect(html).toContain('src="https://cdn.shop.example/logo.png" alt="" referrerpolicy="no-referrer"');
    expect(html).toContain('€12.34');
    expect(html).toContain('>Pay €12.34</button>');
    expect(res.headers['content-security-policy']).toContain('img-src https://cdn.shop.example;');
    const german = (await page(await openSession({ locale: 'de', submitLabel: 'Jetzt kaufen' }))).body.toString();
    expect(german).toContain('<html lang="de">');
    expect(german).toMatch(/12,34\s€/);
    expect(german).toContain('>Jetzt kaufen</button>');
    const noLogo = await page(await openSession({ logoUrl: null }));
    expect(noLogo.headers['content-security-policy']).not.toContain('img-src');
  });

  it('charges through the completion URL before the redirect: a signed call with the token, then 303 with payment=succeeded', async () => {
    const session = await openSession();
    merchant.answers.push(answer(200, { outcome: 'succeeded' }));
    const res = await pay(session);
    expect(res.status).toBe(303);
    const call = merchant.calls[0] as CompletionCall;
    expect(call).toMatchObject({ merchantId: 'shop', mode: 'test', url: COMPLETION_URL, timeoutMs: 2000 });
    const signature = call.headers.find((h) => h.name.toLowerCase() === 'tessera-signature')?.value;
    expect(verifyCompletionSignature(call.body, signature, SECRET)).toEqual({
      formSession: session.id,
      attempt: 1,
      token: tokenNumbered(1),
      card: expect.objectContaining({ last4: '4242' }),
      amount: 1234,
      currency: 'eur',
    });
    expect(call.body.toString()).not.toContain('4242424242424242');
    const landed = verifyFormSessionReturn(String(res.headers.location), { signingSecret: SECRET });
    expect(landed).toMatchObject({ sessionId: session.id, status: 'completed', payment: 'succeeded' });
    expect(await sessions.get(session.id)).toMatchObject({
      status: 'completed',
      payment: { status: 'succeeded', attempts: 1, declineMessage: null },
    });
  });

  it('records form_session.completed with the payment outcome by the time it answers 303, and nothing for a decline', async () => {
    const events = new RedisEventStore(env.redis);
    // A merchant of its own: the Redis is shared by this file's tests.
    const merchantId = `shop-${Math.random()}`;
    const paid = await openSession({}, { merchantId });
    merchant.answers.push(answer(200, { outcome: 'declined', message: 'Insufficient funds' }));
    expect((await pay(paid)).status).toBe(402);
    expect((await events.list(merchantId, 'test', { limit: 10, type: 'form_session.completed' })).data).toEqual([]);
    merchant.answers.push(answer(200, { outcome: 'succeeded' }));
    expect((await pay(paid)).status).toBe(303);
    const unknown = await openSession({}, { merchantId });
    merchant.answers.push(new Error('timed out'));
    expect((await pay(unknown)).status).toBe(303);

    const completed = (await events.list(merchantId, 'test', { limit: 10, type: 'form_session.completed' })).data;
    // Both may share a second (the list's order within one is not the recording order): sorted by token.
    expect(completed.map((e) => e.data.object).sort((a, b) => String(b.token).localeCompare(String(a.token)))).toEqual([
      { id: unknown.id, status: 'completed', token: tokenNumbered(3), brand: 'visa', last4: '4242', payment: 'unknown' },
      { id: paid.id, status: 'completed', token: tokenNumbered(2), brand: 'visa', last4: '4242', payment: 'succeeded' },
    ]);
  });

  it('still sends the shopper back when the completed event cannot be recorded', async () => {
    recorder = { record: () => Promise.reject(new Error('down')), recordOnce: () => Promise.reject(new Error('down')) };
    app.close();
    await start();
    const session = await openSession();
    merchant.answers.push(answer(200, { outcome: 'succeeded' }));
    const res = await pay(session);
    expect(res.status).toBe(303);
    expect(await sessions.get(session.id)).toMatchObject({ status: 'completed' });
  });

  it('shows a decline on the page, escaped, and takes another card in the same session as attempt 2', async () => {
    const session = await openSession();
    merchant.answers.push(
      answer(200, { outcome: 'declined', message: '<b>Insufficient funds</b>' }),
      answer(200, { outcome: 'succeeded' }),
    );
    const declined = await pay(session, '4000000000000002');
    expect(declined.status).toBe(402);
    expect(declined.headers['x-tessera-error']).toBe('payment_declined');
    expect(declined.body.toString()).toContain('role="alert" id="form-error">&lt;b&gt;Insufficient funds&lt;/b&gt;</p>');
    expect((await sessions.get(session.id))?.payment).toEqual({
      status: 'declined',
      attempts: 1,
      declineMessage: '<b>Insufficient funds</b>',
    });
    const retried = await pay(session);
    expect(retried.status).toBe(303);
    expect(merchant.calls.map((c) => (JSON.parse(c.body.toString()) as { attempt: number }).attempt)).toEqual([1, 2]);
  });

  it.each([
    ['a timeout', new TesseraError('psp_timeout')],
    ['a refused destination', new TesseraError('psp_destination_forbidden')],
    ['a 500', answer(500, { outcome: 'succeeded' })],
    ['a malformed answer', answer(200, 'OK')],
  ])('after %s ends the session as completed with payment unknown, and never calls the merchant again', async (_name, reply) => {
    const session = await openSession();
    merchant.answers.push(reply, answer(200, { outcome: 'succeeded' }));
    const res = await pay(session);
    expect(res.status).toBe(303);
    expect(verifyFormSessionReturn(String(res.headers.location), { signingSecret: SECRET })).toMatchObject({ payment: 'unknown' });
    expect((await sessions.get(session.id))?.payment).toMatchObject({ status: 'unknown', attempts: 1 });
    const again = await pay(session, '5555555555554444');
    expect(again.status).toBe(410);
    expect(merchant.calls).toHaveLength(1);
    expect(tokenized).toHaveLength(1);
  });

  it('links the used and expired pages to the cancel URL (else the return URL) in the shop’s name', async () => {
    const used = await openSession({}, { status: 'completed' });
    const usedPage = (await page(used)).body.toString();
    expect(usedPage).toContain(`<a href="${CANCEL_URL}" id="return-link">Return to Mug &lt;Shop&gt;</a>`);
    const expired = await openSession(
      { merchantName: null, locale: 'fr' },
      { cancelUrl: null, expiresAt: new Date(Date.now() - 1000).toISOString() },
    );
    const expiredPage = await page(expired);
    expect(expiredPage.status).toBe(410);
    expect(expiredPage.body.toString()).toContain(`<a href="${RETURN_URL}" id="return-link">Revenir à la boutique</a>`);
  });

  it('without the proxy says payments are unavailable and takes no card, while a collect-only session still works', async () => {
    await app.close();
    await start(false);
    const session = await openSession();
    const shown = await page(session);
    expect(shown.status).toBe(503);
    expect(shown.headers['x-tessera-error']).toBe('payments_unavailable');
    expect(shown.body.toString()).toContain('id="return-link"');
    expect((await pay(session)).status).toBe(503);
    expect(tokenized).toEqual([]);
    const collectOnly = await openSession({}, { terms: null });
    expect((await pay(collectOnly)).status).toBe(303);
  });
});
