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

  it('never lists an event past retention, trimmed or not', async () => {
    const merchantId = `shop-${Math.random()}`;
    const twoDaysAgo = Date.now() - 2 * 86_400_000;
    const old = buildEvent({ type: 'token.created', merchantId, mode: 'test', object: { id: 'tok_abcdefgh' }, now: new Date(twoDaysAgo) });
    await new RedisEventStore(redis.redis, 1, () => twoDaysAgo).record(old);
    const store = new RedisEventStore(redis.redis, 1);
    const recent = buildEvent({ type: 'token.created', merchantId, mode: 'test', object: { id: 'tok_abcdefgh' } });
    await store.record(recent);
    expect(await store.list(merchantId, 'test', { limit: 10 })).toEqual({ data: [recent], hasMore: false });
  });

  it('lists events of the same second newest first', async () => {
    const store = new RedisEventStore(redis.redis);
    const merchantId = `shop-${Math.random()}`;
    const now = new Date();
    const events = [];
    for (let i = 0; i < 3; i++) {
      const event = buildEvent({ type: 'token.created', merchantId, mode: 'test', object: { id: 'tok_abcdefgh' }, now });
      await store.record(event);
      events.push(event);
      await new Promise((r) => setTimeout(r, 2));
    }
    const listed = await store.list(merchantId, 'test', { limit: 10 });
    expect(listed.data.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
  });

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

describe('RedisEventStore.recordOnce', () => {
  const redis = useStoreRedis();

  it('records the first event named by an object and threshold, and none after it', async () => {
    const store = new RedisEventStore(redis.redis);
    const merchantId = `shop-${Math.random()}`;
    const event = () =>
      buildEvent({ type: 'form_session.expired', merchantId, mode: 'test', object: { id: 'fs_abcdefgh', status: 'expired' } });
    const first = event();
    expect(await store.recordOnce(first, 'form_session.expired:fs_abcdefgh')).toBe(true);
    expect(await store.recordOnce(event(), 'form_session.expired:fs_abcdefgh')).toBe(false);
    // Another mode's mark is its own.
    expect(await store.recordOnce({ ...event(), mode: 'live' }, 'form_session.expired:fs_abcdefgh')).toBe(true);

    expect((await store.list(merchantId, 'test', { limit: 10 })).data).toEqual([first]);
    expect((await store.list(merchantId, 'test', { limit: 10, type: 'form_session.expired' })).data).toEqual([first]);
    expect(await redis.redis.xlen(`tessera:events:{m:${merchantId}}:stream`)).toBe(2);
  });
});

describe('RedisEventStore.recordOnce marks', () => {
  const redis = useStoreRedis();

  it('keep a mark for the event retention, or longer when asked', async () => {
    const store = new RedisEventStore(redis.redis, 30);
    const merchantId = `shop-${Math.random()}`;
    const event = () => buildEvent({ type: 'token.expiring_soon', merchantId, mode: 'test', object: { id: 'tok_abcdefgh' } });
    await store.recordOnce(event(), 'a');
    await store.recordOnce(event(), 'b', 90 * 86_400_000);
    const ttl = (name: string) => redis.redis.pttl(`tessera:events:{m:${merchantId}}:once:test:${name}`);
    expect(await ttl('a')).toBeGreaterThan(29 * 86_400_000);
    expect(await ttl('a')).toBeLessThanOrEqual(30 * 86_400_000);
    expect(await ttl('b')).toBeGreaterThan(89 * 86_400_000);
  });
});
