import { createLogger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { usageWindow } from '../domain/idempotency';
import { useGatewayRedis } from '../testing/redis';
import { isStaleClaim, RedisIdempotencyStore, type ClaimOptions, type IdempotencyStore, type OwnClaim } from './idempotencyStore';

const T0 = 1_800_000_000_000;
const opts = (now: number, takeOverStale: boolean): ClaimOptions => ({ lockTtlMs: 1_000, keepMs: 60_000, takeOverStale, now });
const TTL = 60_000;
/** Claim options with a quota of maxBytes for owner, at the real clock (the stores expire counters by it). */
const withQuota = (owner: string, maxBytes: number): ClaimOptions => ({
  ...opts(Date.now(), true),
  quota: { owner, maxBytes, window: usageWindow(Date.now(), TTL) },
});
const CLAIMED = { state: 'claimed' };
const isClaimed = (found: Awaited<ReturnType<IdempotencyStore['claim']>>): found is OwnClaim =>
  typeof found === 'object' && found.state === 'claimed';
const counted = (owner: string) => ({ ttlMs: TTL, quota: { owner, window: usageWindow(Date.now(), TTL) } });

function contract(name: string, make: () => Promise<IdempotencyStore>) {
  describe(`${name} idempotency store`, () => {
    let store: IdempotencyStore;
    beforeEach(async () => {
      store = await make();
    });

    it('gives the scope to one claimant and shows the running claim to the next', async () => {
      expect(await store.claim('m:a', 'fp', opts(T0, true))).toMatchObject(CLAIMED);
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
      expect(takers.filter(isClaimed)).toHaveLength(1);
      expect(takers.filter((t) => !isClaimed(t))).toEqual([
        { state: 'in_progress', fingerprint: 'fp', lockedUntil: T0 + 2_500 },
        { state: 'in_progress', fingerprint: 'fp', lockedUntil: T0 + 2_500 },
      ]);
    });

    it('a request that outlived its lock neither drops nor overwrites the claim of the retry that took it over', async () => {
      const first = (await store.claim('m:h', 'fp', opts(T0, true))) as OwnClaim;
      const retry = (await store.claim('m:h', 'fp', opts(T0 + 1_500, true))) as OwnClaim;
      expect(retry).toMatchObject(CLAIMED);
      await store.release('m:h', first);
      expect(await store.claim('m:h', 'fp', opts(T0 + 1_600, true))).toEqual({
        state: 'in_progress',
        fingerprint: 'fp',
        lockedUntil: T0 + 2_500,
      });
      const late = { state: 'done' as const, fingerprint: 'fp', sealed: 'first-answer' };
      await expect(store.complete('m:h', late, { ttlMs: TTL, replaces: first })).rejects.toThrow(/taken over/);
      expect(await store.claim('m:h', 'fp', opts(T0 + 1_600, true))).toMatchObject({ state: 'in_progress', lockedUntil: T0 + 2_500 });
      // The retry's own answer is kept, and its release (had it done nothing) would have freed the key.
      await store.complete('m:h', { ...late, sealed: 'retry-answer' }, { ttlMs: TTL, replaces: retry });
      expect(await store.claim('m:h', 'fp', opts(T0 + 1_600, true))).toMatchObject({ sealed: 'retry-answer' });
    });

    it('never takes over an answer, nor what is kept of one too large to keep', async () => {
      await store.claim('m:d', 'fp', opts(T0, true));
      await store.complete('m:d', { state: 'done', fingerprint: 'fp', sealed: 'sealed' }, { ttlMs: 60_000 });
      expect(await store.claim('m:d', 'fp', opts(T0 + 10_000, true))).toEqual({ state: 'done', fingerprint: 'fp', sealed: 'sealed' });
      await store.claim('m:g', 'fp', opts(T0, true));
      await store.complete('m:g', { state: 'too_large', fingerprint: 'fp', sealedStatus: 's' }, { ttlMs: 60_000 });
      expect(await store.claim('m:g', 'fp', opts(T0 + 10_000, true))).toEqual({ state: 'too_large', fingerprint: 'fp', sealedStatus: 's' });
    });

    it('refuses new claims of an owner once its stored records reach the quota, and only those', async () => {
      const record = { state: 'done' as const, fingerprint: 'fp', sealed: 'x'.repeat(400) };
      let claims = 0;
      while (isClaimed(await store.claim(`q:${claims}`, 'fp', withQuota('acme:test', 1_000)))) {
        await store.complete(`q:${claims}`, record, counted('acme:test'));
        claims++;
        if (claims > 10) break;
      }
      // Each record is the 400-byte answer plus its JSON and key: the third one reaches 1,000 bytes.
      expect(claims).toBe(3);
      expect(await store.claim(`q:${claims}`, 'fp', withQuota('acme:test', 1_000))).toBe('over_quota');
      // What is already there is still returned; other owners and an unlimited quota are not held back.
      expect(await store.claim('q:0', 'fp', withQuota('acme:test', 1_000))).toEqual(record);
      expect(await store.claim('q:other', 'fp', withQuota('acme:live', 1_000))).toMatchObject(CLAIMED);
      expect(await store.claim('q:unlimited', 'fp', withQuota('acme:test', 0))).toMatchObject(CLAIMED);
    });
  });
}

describe('Redis', () => {
  const db = useGatewayRedis();
  contract('Redis', async () => {
    await db.redis.flushall();
    return new RedisIdempotencyStore(db.redis);
  });

  it('keeps a claim as long as an answer would be kept, so a crashed request is still known after its lock', async () => {
    await db.redis.flushall();
    await new RedisIdempotencyStore(db.redis).claim('m:e', 'fp', opts(Date.now(), false));
    const ttl = await db.redis.pttl('tessera:idempotency:{m:m}:e');
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('counts stored bytes per owner in one counter per slice of the window, expiring with the slice’s last record', async () => {
    await db.redis.flushall();
    const store = new RedisIdempotencyStore(db.redis);
    const record = { state: 'done' as const, fingerprint: 'fp', sealed: 'x'.repeat(400) };
    const completion = counted('acme:test');
    await store.complete('acme:test:k', record, completion);
    const counter = `tessera:idempotency-usage:{m:acme}:test:${completion.quota.window.current}`;
    expect(Number(await db.redis.get(counter))).toBe(
      (await db.redis.strlen('tessera:idempotency:{m:acme}:test:k')) + 'tessera:idempotency:{m:acme}:test:k'.length,
    );
    const expiresAt = await db.redis.pexpiretime(counter);
    expect(expiresAt).toBe(completion.quota.window.currentExpiresAt);
  });

  it('lets a claim written without lockedUntil (an older gateway) expire on its own, never taken over', async () => {
    await db.redis.flushall();
    await db.redis.set('tessera:idempotency:{m:m}:f', JSON.stringify({ state: 'in_progress', fingerprint: 'fp' }), 'PX', 60_000);
    const found = await new RedisIdempotencyStore(db.redis).claim('m:f', 'fp', opts(Date.now() + 3_600_000, true));
    expect(found).toEqual({ state: 'in_progress', fingerprint: 'fp' });
    expect(isStaleClaim(found as never, Date.now() + 3_600_000)).toBe(false);
  });

  it('IDEMPOTENCY_WRITE_ACK=replica:1: a claim no replica acknowledged answers 503 and leaves the key free for a retry', async () => {
    await db.redis.flushall();
    // The test Redis has no replica, so WAIT 1 never has one to count.
    const unreplicated = new RedisIdempotencyStore(db.redis, {
      writeAck: { kind: 'replicas', replicas: 1, timeoutMs: 50 },
      logger: createLogger('gateway', 'silent'),
    });
    await expect(unreplicated.claim('m:w', 'fp', opts(Date.now(), false))).rejects.toMatchObject({
      code: 'service_unavailable',
      status: 503,
    });
    // Dropped without waiting for it (it may queue behind other WAITs): gone moments later.
    for (let i = 0; i < 50 && (await db.redis.exists('tessera:idempotency:{m:m}:w')) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await db.redis.exists('tessera:idempotency:{m:m}:w')).toBe(0);
    expect(await new RedisIdempotencyStore(db.redis).claim('m:w', 'fp', opts(Date.now(), false))).toMatchObject(CLAIMED);
    // Nor is an answer relied on: its write is reported (the answer itself still goes to the client).
    await expect(unreplicated.complete('m:w', { state: 'done', fingerprint: 'fp', sealed: 's' }, { ttlMs: TTL })).rejects.toThrow(
      /replicas acknowledged/,
    );
  });

  describe('records of the layout before merchant slots (kept under their old names by the upgrade)', () => {
    const answered = { state: 'done' as const, fingerprint: 'fp', sealed: 'sealed-answer' };

    it('replays an answer stored under its old name instead of running the request again, and keeps no new claim', async () => {
      await db.redis.flushall();
      await db.redis.set('{tessera-gateway}:tessera:idempotency:acme:k1', JSON.stringify(answered), 'PX', 60_000);
      const store = new RedisIdempotencyStore(db.redis, undefined, { keyPrefix: '{tessera-gateway}:', readUntil: Date.now() + 60_000 });
      expect(await store.claim('acme:k1', 'fp', opts(Date.now(), true))).toEqual(answered);
      expect(await db.redis.exists('tessera:idempotency:{m:acme}:k1')).toBe(0);
      // A claim still running before the upgrade is running: the retry is refused as in progress.
      await db.redis.set(
        'tessera:idempotency:acme:k2',
        JSON.stringify({ state: 'in_progress', fingerprint: 'fp', lockedUntil: Date.now() + 60_000 }),
      );
      const standalone = new RedisIdempotencyStore(db.redis, undefined, { keyPrefix: '', readUntil: Date.now() + 60_000 });
      expect(await standalone.claim('acme:k2', 'fp', opts(Date.now(), true))).toMatchObject({ state: 'in_progress' });
    });

    it('answers 503 and leaves the key free when the old name cannot be read (its master failing over)', async () => {
      await db.redis.flushall();
      // A client allowed the merchant slots' names but not the old ones: its GET of the old name fails as a down master's would.
      await db.redis.call('ACL', 'SETUSER', 'legacy-blind', 'on', '>pw', 'resetkeys', '~tessera:idempotency:*', '+@all');
      const blind = createRedisClient(db.server.url.replace('redis://', 'redis://legacy-blind:pw@'), {
        commandTimeoutMs: 1000,
        profile: 'server',
      });
      try {
        await blind.connect();
        const store = new RedisIdempotencyStore(blind, undefined, { keyPrefix: '{tessera-gateway}:', readUntil: Date.now() + 60_000 });
        await expect(store.claim('acme:k5', 'fp', opts(Date.now(), false))).rejects.toMatchObject({
          code: 'service_unavailable',
          status: 503,
        });
        for (let i = 0; i < 50 && (await db.redis.exists('tessera:idempotency:{m:acme}:k5')) > 0; i++)
          await new Promise((r) => setTimeout(r, 20));
        expect(await db.redis.exists('tessera:idempotency:{m:acme}:k5')).toBe(0);
        const healthy = new RedisIdempotencyStore(db.redis, undefined, { keyPrefix: '{tessera-gateway}:', readUntil: Date.now() + 60_000 });
        expect(await healthy.claim('acme:k5', 'fp', opts(Date.now(), false))).toMatchObject(CLAIMED);
      } finally {
        blind.disconnect();
        await db.redis.call('ACL', 'DELUSER', 'legacy-blind');
      }
    });

    it('lets a stale old claim be taken over, and stops reading old names once none can be alive', async () => {
      await db.redis.flushall();
      await db.redis.set('tessera:idempotency:acme:k3', JSON.stringify({ state: 'in_progress', fingerprint: 'fp', lockedUntil: 1 }));
      const store = new RedisIdempotencyStore(db.redis, undefined, { keyPrefix: '', readUntil: Date.now() + 60_000 });
      expect(await store.claim('acme:k3', 'fp', opts(Date.now(), true))).toMatchObject(CLAIMED);
      await db.redis.set('tessera:idempotency:acme:k4', JSON.stringify(answered));
      const after = new RedisIdempotencyStore(db.redis, undefined, { keyPrefix: '', readUntil: Date.now() - 1 });
      expect(await after.claim('acme:k4', 'fp', opts(Date.now(), true))).toMatchObject(CLAIMED);
    });
  });
});
