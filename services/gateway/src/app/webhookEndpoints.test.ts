import type { TesseraError } from '@tessera/common';
import { EVENT_TYPES, MAX_WEBHOOK_ENDPOINTS, RedisWebhookEndpointStore, signingGenerations, webhookSecret } from '@tessera/merchant-data';
import { useGatewayRedis } from '../testing/redis';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  type WebhookEndpointDeps,
} from './webhookEndpoints';

const PEPPER = 'a-test-pepper-of-sufficient-length-0123456789';
const URL_OK = 'https://shop.example/tessera-events';

describe('webhook endpoint use cases', () => {
  const redis = useGatewayRedis();
  let clock: Date;
  let deps: WebhookEndpointDeps;
  let merchantId: string;
  const key = (mode: 'test' | 'live' = 'test', merchant = merchantId) => ({ merchantId: merchant, mode });
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'ok',
      (err: TesseraError) => `${err.code}${err.param ? ` ${err.param}` : ''}`,
    );

  beforeEach(() => {
    clock = new Date('2030-01-01T00:00:00Z');
    merchantId = `shop-${Math.random().toString(36).slice(2)}`;
    deps = { endpoints: new RedisWebhookEndpointStore(redis.redis), pepper: PEPPER, now: () => clock };
  });

  it('creates an enabled endpoint and shows its generation-1 secret once; reads never show it', async () => {
    const created = await createWebhookEndpoint(deps, key(), { url: URL_OK, enabledEvents: ['token.created', 'token.deleted'] });
    expect(created).toEqual({
      id: expect.stringMatching(/^we_[A-Za-z0-9_-]{32}$/),
      object: 'webhook_endpoint',
      url: URL_OK,
      enabledEvents: ['token.created', 'token.deleted'],
      status: 'enabled',
      createdAt: '2030-01-01T00:00:00.000Z',
      secret: webhookSecret(PEPPER, merchantId, 'test', created.id, 1),
    });
    const read = await getWebhookEndpoint(deps, key(), created.id);
    expect(read).not.toHaveProperty('secret');
    expect(await listWebhookEndpoints(deps, key())).toEqual({ object: 'list', data: [read], hasMore: false });
  });

  it.each([
    [{ url: 'ftp://shop.example/x', enabledEvents: ['*'] }, 'test', 'parameter_invalid url'],
    [{ url: 'http://shop.example/x', enabledEvents: ['*'] }, 'live', 'parameter_invalid url'],
    [{ url: 'https://user:pw@shop.example/x', enabledEvents: ['*'] }, 'test', 'parameter_invalid url'],
    [{ url: URL_OK, enabledEvents: [] }, 'test', 'parameter_invalid enabledEvents'],
    [{ url: URL_OK, enabledEvents: ['token.exploded'] }, 'test', 'parameter_invalid enabledEvents'],
    [{ url: URL_OK, enabledEvents: ['*', 'token.created'] }, 'test', 'parameter_invalid enabledEvents'],
    [{ url: URL_OK, enabledEvents: 'token.created' }, 'test', 'parameter_invalid enabledEvents'],
    [{ url: URL_OK }, 'test', 'parameter_missing enabledEvents'],
    [{ enabledEvents: ['*'] }, 'test', 'parameter_missing url'],
    [{ url: URL_OK, enabledEvents: ['*'], secret: 'whsec_mine' }, 'test', 'parameter_unknown secret'],
  ] as const)('refuses %j with a %s key: %s', async (body, mode, expected) => {
    expect(await codeOf(createWebhookEndpoint(deps, key(mode), body as never))).toBe(expected);
    expect(await deps.endpoints.list(merchantId, mode)).toEqual([]);
  });

  it('never echoes a card number given as an event type, and refuses an overlong list or type before judging it', async () => {
    const err = await createWebhookEndpoint(deps, key(), { url: URL_OK, enabledEvents: ['4242424242424242'] }).catch(
      (e: TesseraError) => e,
    );
    expect(err).toMatchObject({ code: 'parameter_invalid', param: 'enabledEvents' });
    expect((err as TesseraError).message).not.toContain('4242424242424242');
    const messageOf = (enabled: unknown) =>
      createWebhookEndpoint(deps, key(), { url: URL_OK, enabledEvents: enabled }).then(
        () => 'created',
        (e: TesseraError) => `${e.code} ${e.param}: ${e.message}`,
      );
    const long = 'x'.repeat(65);
    expect(await messageOf([long])).toBe('parameter_invalid enabledEvents[0]: "enabledEvents" must hold event types.');
    // One more than the catalogue holds (it grows with new event types, e.g. merchant.shredded).
    expect(await messageOf(Array(EVENT_TYPES.length + 1).fill('token.created'))).toBe(
      `parameter_invalid enabledEvents: "enabledEvents" must hold at most ${EVENT_TYPES.length} types.`,
    );
  });

  it(`refuses the endpoint after ${MAX_WEBHOOK_ENDPOINTS} in one mode, and the other mode still has room`, async () => {
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i += 1)
      await createWebhookEndpoint(deps, key(), { url: `${URL_OK}/${i}`, enabledEvents: ['*'] });
    expect(await codeOf(createWebhookEndpoint(deps, key(), { url: URL_OK, enabledEvents: ['*'] }))).toBe('webhook_endpoint_limit_reached');
    expect(await codeOf(createWebhookEndpoint(deps, key('live'), { url: URL_OK, enabledEvents: ['*'] }))).toBe('ok');
    expect((await listWebhookEndpoints(deps, key())).data).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
  });

  it('answers another merchant’s, another mode’s, unknown and malformed ids as not found, and deletes only its own', async () => {
    const { id } = await createWebhookEndpoint(deps, key(), { url: URL_OK, enabledEvents: ['*'] });
    for (const [owner, endpointId] of [
      [key('live'), id],
      [key('test', 'someone-else'), id],
      [key(), 'we_' + 'x'.repeat(32)],
      [key(), 'not-an-id'],
    ] as const) {
      expect(await codeOf(getWebhookEndpoint(deps, owner, endpointId))).toBe('webhook_endpoint_not_found');
      expect(await codeOf(rotateWebhookSecret(deps, owner, endpointId, {}))).toBe('webhook_endpoint_not_found');
      expect(await codeOf(deleteWebhookEndpoint(deps, owner, endpointId))).toBe('webhook_endpoint_not_found');
    }
    await deleteWebhookEndpoint(deps, key(), id);
    expect(await codeOf(getWebhookEndpoint(deps, key(), id))).toBe('webhook_endpoint_not_found');
    expect((await listWebhookEndpoints(deps, key())).data).toEqual([]);
  });

  it('rotates to generation 2; generation 1 keeps signing for expiresInSeconds, then only the new one does', async () => {
    const created = await createWebhookEndpoint(deps, key(), { url: URL_OK, enabledEvents: ['*'] });
    const rotated = await rotateWebhookSecret(deps, key(), created.id, { expiresInSeconds: 3600 });
    expect(rotated.secret).toBe(webhookSecret(PEPPER, merchantId, 'test', created.id, 2));
    expect(rotated.secret).not.toBe(created.secret);
    const record = await deps.endpoints.get(merchantId, 'test', created.id);
    const signing = (at: Date) => signingGenerations(record?.secrets ?? [], at).map((s) => s.generation);
    expect(signing(new Date(clock.getTime() + 3599_000))).toEqual([2, 1]);
    expect(signing(new Date(clock.getTime() + 3600_000))).toEqual([2]);
  });

  it.each([[-1], [7 * 86_400 + 1], [1.5], ['60']])('refuses expiresInSeconds %j and keeps the secret', async (value) => {
    const created = await createWebhookEndpoint(deps, key(), { url: URL_OK, enabledEvents: ['*'] });
    expect(await codeOf(rotateWebhookSecret(deps, key(), created.id, { expiresInSeconds: value }))).toBe(
      'parameter_invalid expiresInSeconds',
    );
    expect((await deps.endpoints.get(merchantId, 'test', created.id))?.secrets).toEqual([{ generation: 1, expiresAt: null }]);
  });
});
