import { useAdminRedis } from '../testing/redis';
import { newOperatorRecord } from '../domain/operators';
import type { LoginThrottle, OperatorStore, SessionRecord, SessionStore } from './adminStores';
import { RedisLoginThrottle, RedisOperatorStore, RedisSessionStore } from './redisAdminStores';

interface Stores {
  operators: OperatorStore;
  sessions: SessionStore;
  throttle: LoginThrottle;
  /** Lets time pass: a real wait. */
  advance(ms: number): Promise<void>;
}

const session = (operatorId = 'op_1'): SessionRecord => ({
  operatorId,
  csrfToken: 'csrf',
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  ip: '203.0.113.1',
});

function contract(name: string, make: () => Promise<Stores>) {
  describe(`${name} admin stores`, () => {
    let s: Stores;
    beforeEach(async () => {
      s = await make();
    });

    it('keeps operator emails unique and updates password and disabled mark', async () => {
      const op = newOperatorRecord({ email: ' Ops@Acme.Test ', passwordHash: 'h1', merchantId: 'acme', now: new Date() });
      expect(op.email).toBe('ops@acme.test');
      expect(await s.operators.create(op)).toBe(true);
      expect(await s.operators.create({ ...op, id: 'op_other' })).toBe(false);
      expect(await s.operators.findByEmail('ops@acme.test')).toEqual(op);
      expect(await s.operators.update(op.id, { passwordHash: 'h2', disabledAt: '2026-01-01T00:00:00.000Z' })).toMatchObject({
        passwordHash: 'h2',
        disabledAt: '2026-01-01T00:00:00.000Z',
      });
      expect((await s.operators.update(op.id, { disabledAt: null }))?.disabledAt).toBeUndefined();
      expect((await s.operators.get(op.id))?.passwordHash).toBe('h2');
      expect(await s.operators.list()).toHaveLength(1);
      expect(await s.operators.update('op_missing', { passwordHash: 'x' })).toBeUndefined();
    });

    it('forgets a session after its TTL, extends it on touch and deletes it on logout', async () => {
      const record = session();
      await s.sessions.create('d1', record, 300);
      await s.sessions.create('d2', record, 300);
      expect(await s.sessions.get('d1')).toEqual(record);
      await s.sessions.touch('d2', 5_000);
      await s.advance(400);
      expect(await s.sessions.get('d1')).toBeUndefined();
      expect(await s.sessions.get('d2')).toBeDefined();
      await s.sessions.delete('d2');
      expect(await s.sessions.get('d2')).toBeUndefined();
    });

    it('counts login attempts per bucket within a window, then starts over', async () => {
      expect(await s.throttle.hit('ip:1', 300)).toMatchObject({ count: 1 });
      const second = await s.throttle.hit('ip:1', 300);
      expect(second.count).toBe(2);
      expect(second.resetInMs).toBeGreaterThan(0);
      expect(second.resetInMs).toBeLessThanOrEqual(300);
      expect((await s.throttle.hit('ip:2', 300)).count).toBe(1);
      await s.advance(400);
      expect((await s.throttle.hit('ip:1', 300)).count).toBe(1);
      await s.throttle.reset('ip:1');
      expect((await s.throttle.hit('ip:1', 300)).count).toBe(1);
    });

    it('counts failures in a sliding window, locks a bucket for a while, and lets a one-time code be claimed once', async () => {
      const t0 = Date.now();
      expect(await s.throttle.recordFailure('acct:a', 1000, t0)).toBe(1);
      expect(await s.throttle.recordFailure('acct:a', 1000, t0 + 600)).toBe(2);
      // Sliding: at t0 + 1200 the first failure has left the window, the second has not.
      expect(await s.throttle.recordFailure('acct:a', 1000, t0 + 1200)).toBe(2);
      expect(await s.throttle.recordFailure('acct:b', 1000, t0 + 1200)).toBe(1);
      await s.throttle.reset('acct:a');
      expect(await s.throttle.recordFailure('acct:a', 1000, t0 + 1300)).toBe(1);

      expect(await s.throttle.lockRemainingMs('acct:a')).toBe(0);
      await s.throttle.lock('acct:a', 300);
      expect(await s.throttle.lockRemainingMs('acct:a')).toBeGreaterThan(0);
      expect(await s.throttle.lockRemainingMs('acct:b')).toBe(0);
      await s.throttle.reset('acct:a');
      expect(await s.throttle.lockRemainingMs('acct:a')).toBeGreaterThan(0);
      await s.advance(400);
      expect(await s.throttle.lockRemainingMs('acct:a')).toBe(0);
      await s.throttle.lock('acct:a', 10_000);
      await s.throttle.unlock('acct:a');
      expect(await s.throttle.lockRemainingMs('acct:a')).toBe(0);

      expect(await s.throttle.claimOnce('totp:op_1:42', 300)).toBe(true);
      expect(await s.throttle.claimOnce('totp:op_1:42', 300)).toBe(false);
      expect(await s.throttle.claimOnce('totp:op_1:43', 300)).toBe(true);
    });

    it('ends sessions by raising the credentials version on a password or second-factor change, not on a re-hash', async () => {
      const op = newOperatorRecord({ email: 'v@x.test', passwordHash: 'h1', merchantId: null, now: new Date() });
      await s.operators.create(op);
      expect((await s.operators.update(op.id, { passwordHash: 'h2' }))?.credentialsVersion).toBeUndefined();
      expect((await s.operators.update(op.id, { passwordHash: 'h3', credentialsChanged: true }))?.credentialsVersion).toBe(1);
      const mfa = { secret: 'v1.a.b.c', enabledAt: new Date().toISOString(), recoveryCodes: ['d1'] };
      expect(await s.operators.update(op.id, { mfa, credentialsChanged: true })).toMatchObject({ credentialsVersion: 2, mfa });
      expect((await s.operators.update(op.id, { mfa: null, credentialsChanged: true }))?.mfa).toBeUndefined();
      expect((await s.operators.get(op.id))?.credentialsVersion).toBe(3);
    });
  });
}

describe('Redis-backed', () => {
  const db = useAdminRedis();

  contract('Redis', async () => {
    await db.redis.flushall();
    return {
      operators: new RedisOperatorStore(db.redis),
      sessions: new RedisSessionStore(db.redis),
      throttle: new RedisLoginThrottle(db.redis),
      advance: (ms) => new Promise((r) => setTimeout(r, ms)),
    };
  });

  it('stores a session under the digest of its id, with the TTL as a Redis expiry', async () => {
    await db.redis.flushall();
    await new RedisSessionStore(db.redis).create('abc', session(), 60_000);
    const ttl = await db.redis.pttl('{tessera-gateway}:tessera:admin-session:abc');
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
