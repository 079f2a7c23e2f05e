import { useEdgeRedis } from '../testing/redis';
import { commandsSentDuring } from '@tessera/test-support';
import { RedisRateLimitCounter, type RateLimitCounter } from './rateLimitCounter';
import { createRedisClient } from '@tessera/common/redis';

interface Subject {
  counter: RateLimitCounter;
  advance: (ms: number) => Promise<void>;
}

function contract(name: string, make: () => Promise<Subject>) {
  describe(`${name} rate limit counter`, () => {
    let s: Subject;
    beforeEach(async () => {
      s = await make();
    });

    it('counts hits within a window and reports when the window ends', async () => {
      expect((await s.counter.hit('a', 60_000)).count).toBe(1);
      const second = await s.counter.hit('a', 60_000);
      expect(second.count).toBe(2);
      expect(second.resetInMs).toBeGreaterThan(0);
      expect(second.resetInMs).toBeLessThanOrEqual(60_000);
    });

    it('keeps buckets apart', async () => {
      await s.counter.hit('a', 60_000);
      expect((await s.counter.hit('b', 60_000)).count).toBe(1);
    });

    it('starts a new window once the old one has ended', async () => {
      await s.counter.hit('a', 150);
      await s.counter.hit('a', 150);
      await s.advance(300);
      expect((await s.counter.hit('a', 150)).count).toBe(1);
    });

    it('peeks without counting, and sees 0 for a bucket without an open window', async () => {
      expect(await s.counter.peek('a')).toEqual({ count: 0, resetInMs: 0 });
      await s.counter.hit('a', 60_000);
      expect((await s.counter.peek('a')).count).toBe(1);
      expect((await s.counter.peek('a')).count).toBe(1);
    });
  });
}

describe('Redis rate limit counter', () => {
  const db = useEdgeRedis();

  contract('Redis', async () => {
    await db.redis.flushall();
    return { counter: new RedisRateLimitCounter(db.redis), advance: (ms) => new Promise((r) => setTimeout(r, ms)) };
  });

  it('gives every counter an expiry, so no bucket can block forever', async () => {
    await db.redis.flushall();
    const counter = new RedisRateLimitCounter(db.redis);
    await counter.hit('key:key_1', 1000);
    // A counter left without expiry (e.g. by a crash between INCR and PEXPIRE elsewhere) is repaired on the next hit.
    await db.redis.persist('tessera:ratelimit:key:key_1');
    await counter.hit('key:key_1', 1000);
    const ttl = await db.redis.pttl('tessera:ratelimit:key:key_1');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
  });

  it('counts by script SHA after the first call, and still counts after Redis lost its scripts', async () => {
    await db.redis.flushall();
    const counter = new RedisRateLimitCounter(db.redis);
    await counter.hit('key:key_1', 60_000);
    const counts: number[] = [];
    const hit = async () => {
      counts.push((await counter.hit('key:key_1', 60_000)).count);
    };
    expect(await commandsSentDuring(db.server.url, hit)).toEqual(['evalsha']);
    await db.redis.script('FLUSH');
    // NOSCRIPT, then the script's text once more.
    expect(await commandsSentDuring(db.server.url, hit)).toEqual(['evalsha', 'eval']);
    expect(counts).toEqual([2, 3]);
    await db.redis.script('FLUSH');
    expect((await counter.peek('key:key_1')).count).toBe(3);
  });

  it('fails with service_unavailable, not a crash, when Redis does not answer', async () => {
    const dead = createRedisClient('redis://127.0.0.1:1', { commandTimeoutMs: 200, profile: 'server' });
    dead.on('error', () => undefined);
    const counter = new RedisRateLimitCounter(dead);
    await expect(counter.hit('a', 1000)).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(counter.peek('a')).rejects.toMatchObject({ code: 'service_unavailable' });
    dead.disconnect();
  });
});
