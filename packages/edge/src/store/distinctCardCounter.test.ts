import { useEdgeRedis } from '../testing/redis';
import { RedisDistinctCardCounter, type DistinctCardCounter } from './distinctCardCounter';

interface Subject {
  counter: DistinctCardCounter;
  advance: (ms: number) => Promise<void>;
}

function contract(name: string, make: () => Promise<Subject>) {
  describe(`${name} distinct card counter`, () => {
    let s: Subject;
    beforeEach(async () => {
      s = await make();
    });

    it('admits up to the limit of different cards, then refuses new ones but still admits the ones it holds', async () => {
      expect(await s.counter.admit('ip-a', 'card-1', 2, 60_000)).toMatchObject({ admitted: true, distinct: 1 });
      expect(await s.counter.admit('ip-a', 'card-1', 2, 60_000)).toMatchObject({ admitted: true, distinct: 1 });
      expect(await s.counter.admit('ip-a', 'card-2', 2, 60_000)).toMatchObject({ admitted: true, distinct: 2 });
      const refused = await s.counter.admit('ip-a', 'card-3', 2, 60_000);
      expect(refused).toMatchObject({ admitted: false, distinct: 2 });
      expect(refused.resetInMs).toBeGreaterThan(0);
      expect(refused.resetInMs).toBeLessThanOrEqual(60_000);
      expect(await s.counter.admit('ip-a', 'card-2', 2, 60_000)).toMatchObject({ admitted: true, distinct: 2 });
      // The refused card was not added: it is refused again, not let in as known.
      expect((await s.counter.admit('ip-a', 'card-3', 2, 60_000)).admitted).toBe(false);
    });

    it('keeps buckets apart', async () => {
      await s.counter.admit('ip-a', 'card-1', 1, 60_000);
      expect((await s.counter.admit('ip-b', 'card-2', 1, 60_000)).admitted).toBe(true);
    });

    it('forgets the cards once the window has ended', async () => {
      await s.counter.admit('ip-a', 'card-1', 1, 150);
      expect((await s.counter.admit('ip-a', 'card-2', 1, 150)).admitted).toBe(false);
      await s.advance(300);
      expect(await s.counter.admit('ip-a', 'card-2', 1, 150)).toMatchObject({ admitted: true, distinct: 1 });
    });
  });
}

describe('Redis distinct card counter', () => {
  const db = useEdgeRedis();

  contract('Redis', async () => {
    await db.redis.flushall();
    return { counter: new RedisDistinctCardCounter(db.redis), advance: (ms) => new Promise((r) => setTimeout(r, ms)) };
  });

  it('keeps the fingerprints in a set under the rate-limit prefix that expires with its window', async () => {
    await db.redis.flushall();
    await new RedisDistinctCardCounter(db.redis).admit('browser:cards:203.0.113.7', 'fp-1', 3, 3_600_000);
    expect(await db.redis.smembers('tessera:ratelimit:browser:cards:203.0.113.7')).toEqual(['fp-1']);
    const ttl = await db.redis.pttl('tessera:ratelimit:browser:cards:203.0.113.7');
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });

  it('answers service_unavailable when Redis cannot', async () => {
    const counter = new RedisDistinctCardCounter(db.redis);
    const script = db.redis as unknown as { tesseraDistinctCardAdmit: () => Promise<never> };
    const original = script.tesseraDistinctCardAdmit;
    script.tesseraDistinctCardAdmit = () => Promise.reject(new Error('connection lost'));
    try {
      await expect(counter.admit('b', 'fp', 1, 1000)).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      script.tesseraDistinctCardAdmit = original;
    }
  });
});
