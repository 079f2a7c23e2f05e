import { MAX_WEBHOOK_ENDPOINTS, newWebhookEndpointId, type WebhookEndpointRecord } from '../domain/webhookEndpoints';
import { useStoreRedis } from '../testing/redis';
import { RedisWebhookEndpointStore } from './webhookEndpointStore';

describe('RedisWebhookEndpointStore', () => {
  const redis = useStoreRedis();

  function endpoint(merchantId: string, mode: 'test' | 'live', createdAt: string): WebhookEndpointRecord {
    return {
      id: newWebhookEndpointId(),
      merchantId,
      mode,
      url: 'https://shop.example/events',
      enabledEvents: ['*'],
      status: 'enabled',
      createdAt,
      secrets: [{ generation: 1, expiresAt: null }],
    };
  }

  it('lists a mode in creation order, hides the other mode, and keeps a directory of merchants', async () => {
    const store = new RedisWebhookEndpointStore(redis.redis);
    const merchantId = `shop-${Math.random()}`;
    const second = endpoint(merchantId, 'test', '2026-11-02T00:00:00.000Z');
    const first = endpoint(merchantId, 'test', '2026-11-01T00:00:00.000Z');
    const live = endpoint(merchantId, 'live', '2026-11-03T00:00:00.000Z');
    for (const record of [second, first, live]) expect(await store.create(record)).toBe('created');

    expect((await store.list(merchantId, 'test')).map((e) => e.id)).toEqual([first.id, second.id]);
    expect((await store.listForMerchant(merchantId)).map((e) => e.id)).toEqual([first.id, second.id, live.id]);
    expect(await store.get(merchantId, 'live', first.id)).toBeUndefined();
    expect(await store.delete(merchantId, 'live', first.id)).toBe(false);
    expect(await store.delete(merchantId, 'test', first.id)).toBe(true);
    expect((await store.list(merchantId, 'test')).map((e) => e.id)).toEqual([second.id]);
    expect(await store.merchantsWithEndpoints()).toContain(merchantId);
  });

  it('refuses an endpoint over the limit, even when creates race', async () => {
    const store = new RedisWebhookEndpointStore(redis.redis);
    const merchantId = `shop-${Math.random()}`;
    const outcomes = await Promise.all(
      Array.from({ length: MAX_WEBHOOK_ENDPOINTS + 3 }, () => store.create(endpoint(merchantId, 'test', new Date().toISOString()))),
    );
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
    expect(outcomes.filter((o) => o === 'limit_reached')).toHaveLength(3);
  });

  it('rotates a secret with an overlap and changes the status, both landing when they race', async () => {
    const store = new RedisWebhookEndpointStore(redis.redis);
    const merchantId = `shop-${Math.random()}`;
    const record = endpoint(merchantId, 'test', new Date().toISOString());
    await store.create(record);
    const now = new Date();
    await Promise.all([
      store.rotateSecret(merchantId, 'test', record.id, now, 3600),
      store.setStatus(merchantId, 'test', record.id, 'disabled', 'failing_since:2026-11-01T00:00:00.000Z'),
    ]);
    const stored = await store.get(merchantId, 'test', record.id);
    expect(stored?.status).toBe('disabled');
    expect(stored?.disabledReason).toBe('failing_since:2026-11-01T00:00:00.000Z');
    expect(stored?.secrets).toEqual([
      { generation: 2, expiresAt: null },
      { generation: 1, expiresAt: new Date(now.getTime() + 3600_000).toISOString() },
    ]);
    expect((await store.setStatus(merchantId, 'test', record.id, 'enabled'))?.disabledReason).toBeUndefined();
    expect(await store.rotateSecret(merchantId, 'live', record.id, now, 0)).toBeUndefined();
  });
});
