import type { Redis } from 'ioredis';

export { useStoreRedis as useEdgeRedis } from '../../../merchant-data/src/testing/redis';

/**
 * Lets `ms` pass for every key with an expiry, as a fake clock moved on by `ms` would for the
 * stores' windows: keys due by then are gone, the others' time to live shrinks by `ms`.
 */
export async function letTimePass(redis: Redis, ms: number): Promise<void> {
  for (const key of await redis.keys('*')) {
    const ttl = await redis.pttl(key);
    if (ttl < 0) continue;
    if (ttl <= ms) await redis.del(key);
    else await redis.pexpire(key, ttl - ms);
  }
}
