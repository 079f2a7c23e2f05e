import { buildEvent } from '../domain/events';
import { useStoreRedis } from '../testing/redis';
import { RedisEventStore } from './eventStore';

describe('RedisEventStore', () => {
  const redis = useStoreRedis();

  function tokenEvent(merchantId: string, type: 'token.created' | 'token.deleted', secondsAgo: number) {
    return buildEvent({
      type,
      merchantId,
      mode: 'test',
      object: { id: 'tok_abcdefgh', last4: '4242' },
      now: new Date(Date.now() - secondsAgo * 1000),
    });
  }

  it('lists newest first, filters by type, pages with startingAfter, and appends to the stream', async () => {
    const store = new RedisEventStore(redis.redis);
    const merchantId = `shop-${Math.random()}`;
    const a = tokenEvent(merchantId, 'token.created', 3);
    const b = tokenEvent(merchantId, 'token.deleted', 2);
    const c = tokenEvent(merchantId, 'token.created', 1);
    for (const event of [a, b, c]) await store.record(event);

    const first = await store.list(merchantId, 'test', { limit: 2 });
    expect(first.data.map((e) => e.id)).toEqual([c.id, b.id]);
    expect(first.hasMore).toBe(true);
    const second = await store.list(merchantId, 'test', { limit: 2, startingAfter: b.id });
    expect(second).toEqual({ data: [a], hasMore: false });
    expect((await store.list(merchantId, 'test', { limit: 10, type: 'token.created' })).data.map((e) => e.id)).toEqual([c.id, a.id]);

    expect(await store.get(merchantId, 'test', a.id)).toEqual(a);
    expect(await store.get(merchantId, 'live', a.id)).toBeUndefined();
    expect(await store.get('another', 'test', a.id)).toBeUndefined();
    expect((await store.list('another', 'test', { limit: 10 })).data).toEqual([]);

    expect(await redis.redis.xlen(`tessera:events:{m:${merchantId}}:stream`)).toBe(3);
    expect(await redis.redis.pttl(`tessera:events:{m:${merchantId}}:evt:${a.id}`)).toBeGreaterThan(29 * 86_400_000);
  });

  it('lists events recorded in the same millisecond in the order they were recorded, newest first', async () => {
    const now = Date.now();
    const store = new RedisEventStore(redis.redis, 30, () => now);
    const merchantId = `shop-${Math.random()}`;
    const sameSecond = new Date(Math.floor(Date.now() / 1000) * 1000);
    const events = Array.from({ length: 8 }, () =>
      buildEvent({ type: 'token.created', merchantId, mode: 'test', object: { id: 'tok_abcdefgh' }, now: sameSecond }),
    );
    for (const event of events) await store.record(event);
    const listed = await store.list(merchantId, 'test', { limit: 10 });
    expect(listed.data.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
  });
});
