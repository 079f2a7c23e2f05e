/**
 * Issue 27: the merchant API for webhook endpoints and events, through the real gateway, vault and
 * Redis, called with the real Node SDK (packages/sdk) the way a merchant's server calls it.
 *
 * The provisional token is made the way the fields service's browser route makes it, by the
 * vault's Tokenize with provisional set (as provisionalTokens.test.ts does): what matters here is
 * that the merchant's retain, not the browser, is its event.
 */
import { Redis } from 'ioredis';
import { callUnary, createVaultClient, type TokenizeRequest, type TokenRecord__Output, type VaultClient } from '@tessera/protos';
import {
  MAX_WEBHOOK_ENDPOINTS,
  RedisWebhookEndpointStore,
  signingGenerations,
  webhookSecret,
  type WebhookEndpointRecord,
} from '@tessera/merchant-data';
import {
  Tessera,
  TesseraInvalidRequestError,
  TesseraNotFoundError,
  webhooks,
  type CardInput,
  type TesseraEvent,
  type WebhookEndpoint,
} from '../../packages/sdk/src';
import { aCard, apiClient, type ApiKey, findCardDataInLogs, TEST_CARDS, TEST_CVV, useSharedStack } from './harness';

jest.setTimeout(90_000);

const env = useSharedStack();
const acmeId = env.merchant('acme');
const RECEIVER = 'https://shop.example/tessera-events';

let testKey: ApiKey;
let liveKey: ApiKey;
let tessera: Tessera;
let tesseraLive: Tessera;
let vault: VaultClient;
let redis: Redis;

const sdkFor = (key: ApiKey) => new Tessera(key.apiKey, { baseUrl: `${env.stack.baseUrl}/v1`, timeoutMs: 20_000 });
const card = (overrides: Record<string, unknown> = {}) => aCard(overrides) as unknown as CardInput;
const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'no error',
    (e: unknown) => e,
  );

beforeAll(() => {
  testKey = env.stack.createKey(acmeId, 'test');
  liveKey = env.stack.createKey(acmeId, 'live');
  tessera = sdkFor(testKey);
  tesseraLive = sdkFor(liveKey);
  vault = createVaultClient(env.stack.env.VAULT_ADDR as string);
  redis = new Redis(env.redis.url);
});

afterAll(() => {
  vault?.close();
  redis?.disconnect();
});

async function storedEndpoint(id: string): Promise<WebhookEndpointRecord> {
  const record = await new RedisWebhookEndpointStore(redis).get(acmeId, 'test', id);
  if (!record) throw new Error('endpoint not stored');
  return record;
}

describe('webhook endpoints (/v1/webhook-endpoints) with the SDK', () => {
  let endpoint: WebhookEndpoint;

  it('creates an endpoint with a whsec_ secret shown once; an Idempotency-Key retry answers the same endpoint', async () => {
    endpoint = await tessera.webhookEndpoints.create(
      { url: RECEIVER, enabledEvents: ['token.created', 'token.deleted'] },
      { idempotencyKey: `setup-${acmeId}` },
    );
    expect(endpoint).toEqual({
      id: expect.stringMatching(/^we_[A-Za-z0-9_-]{32}$/),
      object: 'webhook_endpoint',
      url: RECEIVER,
      enabledEvents: ['token.created', 'token.deleted'],
      status: 'enabled',
      createdAt: expect.any(String),
      secret: webhookSecret(env.stack.env.API_KEY_PEPPER as string, acmeId, 'test', endpoint.id, 1),
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const retried = await tessera.webhookEndpoints.create(
      { url: RECEIVER, enabledEvents: ['token.created', 'token.deleted'] },
      { idempotencyKey: `setup-${acmeId}` },
    );
    expect(retried).toEqual(endpoint);
    expect((await tessera.webhookEndpoints.list()).data.map((e) => e.id)).toEqual([endpoint.id]);
  });

  it('lists and retrieves it without the secret', async () => {
    const { secret: _shownOnce, ...withoutSecret } = endpoint;
    expect(await tessera.webhookEndpoints.retrieve(endpoint.id)).toEqual(withoutSecret);
    expect(await tessera.webhookEndpoints.list()).toEqual({ object: 'list', data: [withoutSecret], hasMore: false });
  });

  it('rotates the secret: both the old and the new one sign deliveries during the overlap, and each verifies alone', async () => {
    const rotated = await tessera.webhookEndpoints.rotateSecret(endpoint.id, { expiresInSeconds: 3600 });
    expect(rotated).toMatchObject({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.secret).not.toBe(endpoint.secret);

    const pepper = env.stack.env.API_KEY_PEPPER as string;
    const signing = signingGenerations((await storedEndpoint(endpoint.id)).secrets, new Date());
    const secrets = signing.map((s) => webhookSecret(pepper, acmeId, 'test', endpoint.id, s.generation));
    expect(secrets).toEqual([rotated.secret, endpoint.secret]);

    const body = JSON.stringify({ id: 'evt_AAAAAAAAAAAAAAAA', type: 'token.created', created: 1, mode: 'test', data: { object: {} } });
    const header = webhooks.signWebhookPayload(secrets, body);
    expect(webhooks.constructEvent(body, header, endpoint.secret as string).id).toBe('evt_AAAAAAAAAAAAAAAA');
    expect(webhooks.constructEvent(body, header, rotated.secret as string).id).toBe('evt_AAAAAAAAAAAAAAAA');
    expect(() => webhooks.constructEvent(body, header, 'whsec_someone-else')).toThrow(/signature/i);
  });

  it('refuses a bad URL or event list in the envelope, and a live key’s http URL', async () => {
    const cases: Array<[Tessera, { url: string; enabledEvents: string[] }, string]> = [
      [tessera, { url: 'ftp://shop.example/x', enabledEvents: ['*'] }, 'url'],
      [tesseraLive, { url: 'http://shop.example/x', enabledEvents: ['*'] }, 'url'],
      [tessera, { url: RECEIVER, enabledEvents: ['token.exploded'] }, 'enabledEvents'],
    ];
    for (const [client, params, param] of cases) {
      const err = await errorOf(client.webhookEndpoints.create(params));
      expect(err).toBeInstanceOf(TesseraInvalidRequestError);
      expect(err).toMatchObject({ status: 400, code: 'parameter_invalid', param });
    }
  });

  it(`refuses more than ${MAX_WEBHOOK_ENDPOINTS} endpoints per mode with 400 webhook_endpoint_limit_reached`, async () => {
    const limited = sdkFor(env.stack.createKey(env.merchant('limited'), 'test'));
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i += 1)
      await limited.webhookEndpoints.create({ url: `${RECEIVER}/${i}`, enabledEvents: ['*'] });
    const err = await errorOf(limited.webhookEndpoints.create({ url: RECEIVER, enabledEvents: ['*'] }));
    expect(err).toMatchObject({ status: 400, code: 'webhook_endpoint_limit_reached' });
    expect((await limited.webhookEndpoints.list()).data).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
  });

  it('answers 404 webhook_endpoint_not_found for unknown ids, and for this endpoint to the other mode’s and another merchant’s keys', async () => {
    const otherMerchant = sdkFor(env.stack.createKey(env.merchant('globex'), 'test'));
    expect((await tesseraLive.webhookEndpoints.list()).data).toEqual([]);
    for (const [client, id] of [
      [tessera, `we_${'x'.repeat(32)}`],
      [tessera, 'nope'],
      [tesseraLive, endpoint.id],
      [otherMerchant, endpoint.id],
    ] as const) {
      for (const call of [
        () => client.webhookEndpoints.retrieve(id),
        () => client.webhookEndpoints.rotateSecret(id),
        () => client.webhookEndpoints.del(id),
      ]) {
        const err = await errorOf(call());
        expect(err).toBeInstanceOf(TesseraNotFoundError);
        expect(err).toMatchObject({ status: 404, code: 'webhook_endpoint_not_found' });
      }
    }
    expect(await tessera.webhookEndpoints.retrieve(endpoint.id)).toMatchObject({ id: endpoint.id });
  });

  it('refuses a publishable key on every route with 403 publishable_key_forbidden', async () => {
    const publishable = env.stack.createPublishableKey(acmeId, ['https://shop.example']);
    const asBrowser = apiClient(env.stack, publishable.apiKey);
    for (const [method, route, body] of [
      ['POST', '/v1/webhook-endpoints', { url: RECEIVER, enabledEvents: ['*'] }],
      ['GET', '/v1/webhook-endpoints', undefined],
      ['GET', `/v1/webhook-endpoints/${endpoint.id}`, undefined],
      ['DELETE', `/v1/webhook-endpoints/${endpoint.id}`, undefined],
      ['POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, {}],
      ['GET', '/v1/events', undefined],
      ['GET', '/v1/events/evt_AAAAAAAAAAAAAAAA', undefined],
    ] as const) {
      const res = await asBrowser(method, route, body, { origin: 'https://shop.example' });
      expect({ route: `${method} ${route}`, status: res.status, code: res.body?.error?.code }).toEqual({
        route: `${method} ${route}`,
        status: 403,
        code: 'publishable_key_forbidden',
      });
    }
    expect(await tessera.webhookEndpoints.retrieve(endpoint.id)).toMatchObject({ id: endpoint.id });
  });

  it('deletes it: 204, then gone from the list and 404 on retrieve', async () => {
    const res = await apiClient(env.stack, testKey.apiKey)('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await errorOf(tessera.webhookEndpoints.retrieve(endpoint.id))).toMatchObject({ code: 'webhook_endpoint_not_found' });
    expect((await tessera.webhookEndpoints.list()).data).toEqual([]);
  });
});

describe('events (/v1/events) with the SDK', () => {
  const tokenize = (request: TokenizeRequest) =>
    callUnary<TokenizeRequest, TokenRecord__Output>(vault, vault.Tokenize, request, { timeoutMs: 5000 });

  it('shows token.created, token.retained and token.deleted newest first, as the merchant may see them, with no card number', async () => {
    const created = await tessera.tokens.create(card({ number: TEST_CARDS.mastercard }));
    const deduplicated = await tessera.tokens.create({ ...card({ number: TEST_CARDS.mastercard }), dedupe: true });
    expect(deduplicated.token).toBe(created.token);

    const browserCard = aCard();
    const provisional = await tokenize({
      merchantId: acmeId,
      mode: 'test',
      number: TEST_CARDS.visa,
      holderName: browserCard.holderName as string,
      expiryMonth: browserCard.expiryMonth as number,
      expiryYear: browserCard.expiryYear as number,
      cvv: TEST_CVV,
      provisional: true,
    });
    // The keys the stack made have events of their own (api_key.created): only token events count here.
    const tokenEvents = async () => (await tessera.events.list({ limit: 100 })).data.filter((e) => e.type.startsWith('token.'));
    // Made in a browser: not the merchant's yet, so no event.
    expect((await tokenEvents()).map((e) => e.type)).toEqual(['token.created']);
    await tessera.tokens.retain(provisional.token);
    await tessera.tokens.retain(provisional.token); // already retained: no second event
    await tessera.tokens.delete(created.token);

    const list = await tokenEvents();
    expect(list.map((e) => [e.type, (e.data.object as { id: string }).id])).toEqual([
      ['token.deleted', created.token],
      ['token.retained', provisional.token],
      ['token.created', created.token],
    ]);
    const [deleted, retained, made] = list as [TesseraEvent, TesseraEvent, TesseraEvent];
    expect(made).toEqual({
      id: expect.stringMatching(/^evt_[A-Za-z0-9_-]{16}$/),
      object: 'event',
      type: 'token.created',
      created: expect.any(Number),
      mode: 'test',
      data: {
        object: { id: created.token, brand: 'mastercard', last4: '4444', expiryMonth: created.expiryMonth, expiryYear: created.expiryYear },
      },
    });
    expect(retained.data.object).toEqual({
      id: provisional.token,
      brand: 'visa',
      last4: '4242',
      expiryMonth: provisional.expiryMonth,
      expiryYear: provisional.expiryYear,
    });
    expect(deleted.data.object).toEqual({ id: created.token });
    expect(await tessera.events.retrieve(made.id)).toEqual(made);

    const everything = JSON.stringify(list);
    expect(everything).not.toContain(acmeId);
    expect(everything).not.toMatch(/\d{12,}/);
    expect(findCardDataInLogs(everything, Object.values(TEST_CARDS), [TEST_CVV])).toEqual([]);
    expect(findCardDataInLogs(env.stack.logs(), Object.values(TEST_CARDS), [TEST_CVV])).toEqual([]);
  });

  it('filters by type and pages with limit and startingAfter', async () => {
    const first = await tessera.events.list({ type: 'token.created' });
    expect(first.data.map((e) => e.type)).toEqual(['token.created']);
    const all = (await tessera.events.list({ limit: 100 })).data.map((e) => e.id);
    expect(all.length).toBeGreaterThan(3);
    const page1 = await tessera.events.list({ limit: 2 });
    expect({ ids: page1.data.map((e) => e.id), hasMore: page1.hasMore }).toEqual({ ids: all.slice(0, 2), hasMore: true });
    const page2 = await tessera.events.list({ limit: 100, startingAfter: page1.data[1]?.id as string });
    expect({ ids: page2.data.map((e) => e.id), hasMore: page2.hasMore }).toEqual({ ids: all.slice(2), hasMore: false });
  });

  it('refuses bad query values with 400 in the envelope', async () => {
    for (const [params, param] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ type: 'token.exploded' }, 'type'],
      [{ startingAfter: 'tok_1' }, 'startingAfter'],
    ] as const) {
      const err = await errorOf(tessera.events.list(params));
      expect(err).toBeInstanceOf(TesseraInvalidRequestError);
      expect(err).toMatchObject({ status: 400, code: 'parameter_invalid', param });
    }
  });

  it('shows nothing of the test mode’s events to a live key, nor to another merchant; their ids are 404 event_not_found', async () => {
    const [event] = (await tessera.events.list({ limit: 1 })).data;
    expect(event).toBeDefined();
    const otherMerchant = sdkFor(env.stack.createKey(env.merchant('initech'), 'test'));
    for (const client of [tesseraLive, otherMerchant]) {
      // Each key's own api_key.created is all they may see.
      const seen = (await client.events.list({ limit: 100 })).data;
      expect(seen.map((e) => e.id)).not.toContain(event?.id);
      expect(seen.filter((e) => e.type !== 'api_key.created')).toEqual([]);
      const err = await errorOf(client.events.retrieve(event?.id as string));
      expect(err).toBeInstanceOf(TesseraNotFoundError);
      expect(err).toMatchObject({ status: 404, code: 'event_not_found' });
    }
    expect(await errorOf(tessera.events.retrieve('evt_AAAAAAAAAAAAAAAA'))).toMatchObject({ status: 404, code: 'event_not_found' });
  });
});
