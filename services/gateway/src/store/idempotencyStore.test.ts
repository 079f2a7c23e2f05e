import { useGatewayRedis } from '../testing/redis';
import { isStaleClaim, MemoryIdempotencyStore, RedisIdempotencyStore, type ClaimOptions, type IdempotencyStore } from './idempotencyStore';

const T0 = 1_800_000_000_000;
const opts = (now: number, takeOverStale: boolean): ClaimOptions => ({ lockTtlMs: 1_000, keepMs: 60_000, takeOverStale, now });

function contract(name: string, make: () => Promise<IdempotencyStore>) {
  describe(`${name} idempotency store`, () => {
    let store: IdempotencyStore;
    beforeEach(async () => {
      store = await make();
    });

    it('gives the scope to one claimant and shows the running claim to the next', async () => {
      expect(await store.claim('m:a', 'fp', opts(T0, true))).toBe('claimed');
      const next = await store.claim('m:a', 'fp', opts(T0 + 500, true));
      expect(next).toEqual({ state: 'in_progress', fingerprint: 'fp', lockedUntil: T0 + 1_000 });
      expect(isStaleClaim(next as never, T0 + 500)).toBe(false);
    });

    it('shows a claim past its lock as stale, and keeps it, when the route must not run again', async () => {
      await store.claim('m:b', 'fp', opts(T0, false));
      const later = await store.claim('m:b', 'fp', opts(T0 + 1_000, false));
      expect(later).toMatchObject({ state: 'in_progress', fingerprint: 'fp' });
      expect(isStaleClaim(later as never, T0 + 1_000)).toBe(true);
      expect(await store.claim('m:b', 'fp', opts(T0 + 2_000, false))).toMatchObject({ state: 'in_progress', lockedUntil: T0 + 1_000 });
    });

    it('lets exactly one caller take over a stale claim when the route may run again', async () => {
      await store.claim('m:c', 'fp', opts(T0, true));
      const takers = await Promise.all([1, 2, 3].map(() => store.claim('m:c', 'fp', opts(T0 + 1_500, true))));
      expect(takers.filter((t) => t === 'claimed')).toHaveLength(1);
      expect(takers.filter((t) => t !== 'claimed')).toEqual([
        { state: 'in_progress', fingerprint: 'fp', lockedUntil: T0 + 2_500 },
        { state: 'in_progress', fingerprint: 'fp', lockedUntil: T0 + 2_500 },
      ]);
    });

    it('never takes over an answer', async () => {
      await store.claim('m:d', 'fp', opts(T0, true));
      await store.complete('m:d', 'fp', 'sealed', 60_000);
      expect(await store.claim('m:d', 'fp', opts(T0 + 10_000, true))).toEqual({ state: 'done', fingerprint: 'fp', sealed: 'sealed' });
    });
  });
}

contract('memory', async () => new MemoryIdempotencyStore());

describe('Redis', () => {
  const db = useGatewayRedis();
  contract('Redis', async () => {
    await db.redis.flushall();
    return new RedisIdempotencyStore(db.redis);
  });

  it('keeps a claim as long as an answer would be kept, so a crashed request is still known after its lock', async () => {
    await db.redis.flushall();
    await new RedisIdempotencyStore(db.redis).claim('m:e', 'fp', opts(Date.now(), false));
    const ttl = await db.redis.pttl('tessera:idempotency:m:e');
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('lets a claim written without lockedUntil (an older gateway) expire on its own, never taken over', async () => {
    await db.redis.flushall();
    await db.redis.set('tessera:idempotency:m:f', JSON.stringify({ state: 'in_progress', fingerprint: 'fp' }), 'PX', 60_000);
    const found = await new RedisIdempotencyStore(db.redis).claim('m:f', 'fp', opts(Date.now() + 3_600_000, true));
    expect(found).toEqual({ state: 'in_progress', fingerprint: 'fp' });
    expect(isStaleClaim(found as never, Date.now() + 3_600_000)).toBe(false);
  });
});
