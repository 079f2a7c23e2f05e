/**
 * Issue 27, item 1: the events that are not token CRUD, emitted by the real services on a Redis
 * running the shipped ACL (each service as its own user), read straight from Redis with the event
 * store. The hosted page's form_session.completed is recorded even when the shopper's browser
 * never follows the redirect (it is closed right after the card is sent); the sweeps run every
 * second here; no event holds the card number in any spelling.
 */
import { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { RedisEventStore, type EventRecord, type EventType } from '../../packages/merchant-data/src';
import { launchChromium } from './browser';
import { apiClient, startRedis, startStack, type RedisServer, type Stack } from './harness';
import { WebhookReceiver } from './webhookReceiver';

jest.setTimeout(180_000);

const PAN = '4242424242424242';
const CVC = '046';
const EXPIRY_TYPED = `12${String(new Date().getUTCFullYear() + 4).slice(2)}`;
/** Long enough for Chromium to fill the page, short enough that an unused session expires during the test. */
const FORM_SESSION_TTL_SECONDS = 25;
const PER_KEY = 3;
const CVV_TTL_SECONDS = 3;

/** The PAN with any one separator (or none) between its digits: 4242424242424242, 4242 4242 …, 4242-4242-…, "4","2",… */
const PAN_ANY_SPELLING = new RegExp(PAN.split('').join('\\D{0,3}'));

let redis: RedisServer;
let stack: Stack;
let reader: Redis;
let events: RedisEventStore;
let browser: Browser | undefined;

beforeAll(async () => {
  redis = await startRedis({ acl: true });
  stack = await startStack(redis, {
    env: {
      // The hosted page's event is delivered to a receiver on loopback.
      WEBHOOK_DELIVERY: 'on',
      EVENT_SWEEP_INTERVAL_SECONDS: '1',
      FORM_SESSION_TTL_SECONDS: String(FORM_SESSION_TTL_SECONDS),
      API_KEY_EXPIRING_SOON_DAYS: '7',
      BROWSER_TOKENS_PER_KEY_PER_MINUTE: String(PER_KEY),
      // Whatever today's date, a card expiring this month ends within it.
      TOKEN_EXPIRING_SOON_DAYS: '40',
    },
    // A pass over the card records every second, not every day.
    serviceEnv: { vault: { CVV_TTL_SECONDS: String(CVV_TTL_SECONDS), TOKEN_EXPIRING_SOON_PASS_SECONDS: '1' } },
  });
  // The admin user's URL: the admin service may read tessera:events:* (deploy/redis/users.acl).
  reader = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await reader.connect();
  events = new RedisEventStore(reader);
});

afterAll(async () => {
  await browser?.close();
  reader?.disconnect();
  await stack?.stop();
  await redis?.stop();
});

/** Every event of a merchant and mode, as recorded (newest first). */
async function eventsOf(merchantId: string, mode: 'test' | 'live' = 'test', type?: EventType): Promise<EventRecord[]> {
  return (await events.list(merchantId, mode, { limit: 100, ...(type ? { type } : {}) })).data;
}

/** Waits until `type` is recorded for the merchant (the sweeps run every second), up to a deadline. */
async function eventually(merchantId: string, type: EventType, count = 1): Promise<EventRecord[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = await eventsOf(merchantId, 'test', type);
    if (found.length >= count || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Everything recorded, the delivery streams included, as raw text. */
async function rawEventText(merchantIds: string[]): Promise<string> {
  const parts: string[] = [];
  for (const merchantId of merchantIds) {
    for (const mode of ['test', 'live'] as const) parts.push(JSON.stringify(await eventsOf(merchantId, mode)));
    parts.push(JSON.stringify(await reader.xrange(`tessera:events:{m:${merchantId}}:stream`, '-', '+')));
  }
  return parts.join('\n');
}

describe('the hosted payment page', () => {
  it('records form_session.completed with the token when the shopper closes the browser right after sending the card', async () => {
    const secret = stack.createKey('shop-hosted');
    stack.cli(['return-urls', 'set', '--merchant', 'shop-hosted', 'https://shop.example/done']);
    const api = apiClient(stack, secret.apiKey);
    // The merchant's receiver, on loopback: it learns of the payment from the webhook alone.
    const receiver = await new WebhookReceiver().start();
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      url: `${receiver.origin}/hosted`,
      enabledEvents: ['form_session.completed'],
    });
    expect(endpoint.status).toBe(201);
    receiver.route('hosted', (endpoint.body as { secret: string }).secret);
    const created = await api('POST', '/v1/form-sessions', { returnUrl: 'https://shop.example/done' });
    expect(created.status).toBe(201);
    const session = created.body as { id: string; url: string; expiresAt: string };

    browser = await launchChromium();
    const context = await browser.newContext();
    const page = await context.newPage();
    // The shop is never reached: the browser goes nowhere after the card is sent.
    await page.route('https://shop.example/**', (route) => route.abort());
    await page.goto(session.url);
    await page.getByLabel('Card number').pressSequentially(PAN);
    await page.getByLabel('Expiry date (MM / YY)').pressSequentially(EXPIRY_TYPED);
    await page.getByLabel('Security code').pressSequentially(CVC);
    const answered = page.waitForResponse((res) => res.url() === session.url && res.request().method() === 'POST');
    await page.getByRole('button', { name: 'Pay' }).click();
    expect((await answered).status()).toBe(303);
    await context.close();

    const [completed] = await eventually('shop-hosted', 'form_session.completed');
    expect(completed).toMatchObject({ type: 'form_session.completed', merchantId: 'shop-hosted', mode: 'test' });
    const read = await api('GET', `/v1/form-sessions/${session.id}`);
    expect(read.body).toMatchObject({ status: 'completed' });
    const { token } = read.body as { token: string };
    expect(token).toMatch(/^tok\./);
    expect(completed!.data.object).toEqual({ id: session.id, status: 'completed', token, brand: 'visa', last4: '4242' });
    // Recorded by the submission itself, not by the sweep that sees the session only once it expired.
    expect(completed!.created * 1000).toBeLessThan(Date.parse(session.expiresAt));
    // ... and delivered, signed, to the merchant's endpoint, with no browser coming back.
    try {
      for (let i = 0; i < 120 && receiver.delivered('hosted').length === 0; i++) await new Promise((r) => setTimeout(r, 250));
      expect(receiver.received.filter((r) => r.endpoint === 'hosted' && r.status === 200)).toEqual([
        expect.objectContaining({ id: completed!.id, type: 'form_session.completed', objectId: session.id, verified: true }),
      ]);
    } finally {
      await receiver.stop();
    }
  });

  it('records form_session.expired once for a session nobody used', async () => {
    const secret = stack.createKey('shop-unused');
    stack.cli(['return-urls', 'set', '--merchant', 'shop-unused', 'https://shop.example/done']);
    const created = await apiClient(stack, secret.apiKey)('POST', '/v1/form-sessions', { returnUrl: 'https://shop.example/done' });
    const session = created.body as { id: string; expiresAt: string };

    const expired = await eventually('shop-unused', 'form_session.expired');
    expect(expired.map((e) => [e.merchantId, e.mode, e.data.object])).toEqual([
      ['shop-unused', 'test', { id: session.id, status: 'expired' }],
    ]);
    expect(expired[0]!.created * 1000).toBeGreaterThanOrEqual(Date.parse(session.expiresAt) - 1000);
    // More sweeps ran since (every second): still one.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await eventsOf('shop-unused', 'test', 'form_session.expired')).toHaveLength(1);
    expect(await eventsOf('shop-unused', 'test', 'form_session.completed')).toEqual([]);
    // The completed session of the test before expired earlier and was swept too: its event stays one, and it never "expired".
    expect(await eventsOf('shop-hosted', 'test', 'form_session.completed')).toHaveLength(1);
    expect(await eventsOf('shop-hosted', 'test', 'form_session.expired')).toEqual([]);
  });
});

describe('API keys', () => {
  it('records api_key.created and api_key.revoked for the keys CLI, and api_key.expiring_soon once for a key revoked in 3 days', async () => {
    const first = stack.createKey('shop-keys');
    const second = stack.createKey('shop-keys');
    stack.cli(['revoke', first.id]);
    stack.cli(['revoke', second.id, '--after', '3d']);

    const created = await eventually('shop-keys', 'api_key.created', 2);
    expect(created.map((e) => e.data.object).sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
      [first, second].map((k) => ({ id: k.id, kind: 'secret', mode: 'test' })).sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect((await eventsOf('shop-keys', 'test', 'api_key.revoked')).map((e) => e.data.object)).toEqual([
      { id: first.id, kind: 'secret', mode: 'test' },
    ]);
    const expiring = await eventually('shop-keys', 'api_key.expiring_soon');
    expect(expiring.map((e) => [e.merchantId, e.mode, e.data.object])).toEqual([
      ['shop-keys', 'test', { id: second.id, kind: 'secret', mode: 'test' }],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await eventsOf('shop-keys', 'test', 'api_key.expiring_soon')).toHaveLength(1);

    const raw = await rawEventText(['shop-keys']);
    expect(raw).not.toContain(first.apiKey);
    expect(raw).not.toContain(second.apiKey);
  });
});

describe('card testing', () => {
  it('records card_testing.suspected once when a publishable key reaches its threshold, not per attempt', async () => {
    const origin = new URL(stack.fieldsUrl).origin;
    const key = stack.createPublishableKey('shop-attack', ['https://shop.example']);
    const statuses: number[] = [];
    for (let i = 0; i < PER_KEY + 3; i++) {
      const res = await fetch(`${stack.fieldsUrl}/v1/browser/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key.apiKey, origin, 'x-tessera-parent-origin': 'https://shop.example' },
        body: JSON.stringify({ number: PAN, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvv: CVC }),
      });
      statuses.push(res.status);
    }
    // Admitted up to the threshold, then a proof of work is demanded.
    expect(statuses.slice(0, PER_KEY)).toEqual(Array(PER_KEY).fill(201));
    expect(statuses.slice(PER_KEY)).toEqual([429, 429, 429]);

    const suspected = await eventually('shop-attack', 'card_testing.suspected');
    expect(suspected.map((e) => [e.merchantId, e.mode, e.data.object])).toEqual([
      ['shop-attack', 'test', { keyId: key.id, attempts: PER_KEY, windowSeconds: 300 }],
    ]);
  });
});

describe('stored cards (the vault)', () => {
  it('records token.expiring_soon once for a card expiring this month, and cvv.expired_unused once for its CVV nobody used', async () => {
    const secret = stack.createKey('shop-cards');
    const api = apiClient(stack, secret.apiKey);
    const now = new Date();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const soon = await api('POST', '/v1/token', { number: PAN, ...thisMonth, cvv: CVC });
    expect(soon.status).toBe(201);
    const later = await api('POST', '/v1/token', { number: '5555555555554444', expiryMonth: 6, expiryYear: now.getUTCFullYear() + 4 });
    expect(later.status).toBe(201);
    const token = (soon.body as { token: string }).token;

    const expiring = await eventually('shop-cards', 'token.expiring_soon');
    expect(expiring.map((e) => [e.merchantId, e.mode, e.data.object])).toEqual([
      ['shop-cards', 'test', { id: token, brand: 'visa', last4: '4242', ...thisMonth }],
    ]);
    const cvv = await eventually('shop-cards', 'cvv.expired_unused');
    expect(cvv.map((e) => [e.merchantId, e.mode, e.data.object.id])).toEqual([['shop-cards', 'test', token]]);
    // Swept every second since: still one of each.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await eventsOf('shop-cards', 'test', 'token.expiring_soon')).toHaveLength(1);
    expect(await eventsOf('shop-cards', 'test', 'cvv.expired_unused')).toHaveLength(1);
  });
});

describe('every event recorded here', () => {
  it('holds no card number in any spelling, and no CVV field', async () => {
    const raw = await rawEventText(['shop-hosted', 'shop-unused', 'shop-keys', 'shop-attack', 'shop-cards']);
    expect(raw.length).toBeGreaterThan(100);
    for (const spelling of [
      PAN,
      '4242 4242 4242 4242',
      '4242-4242-4242-4242',
      '"4","2","4","2","4","2","4","2","4","2","4","2","4","2","4","2"',
    ]) {
      expect(spelling).toMatch(PAN_ANY_SPELLING);
    }
    expect(raw).not.toMatch(PAN_ANY_SPELLING);
    expect(raw).not.toMatch(/\\?"(cvv|cvc|number|pan)\\?"\s*:/i);
    expect(raw).not.toMatch(/5555\D{0,3}5555\D{0,3}5555\D{0,3}4444/);
  });
});
