import type { Redis } from 'ioredis';
import { useRedisServer, type RedisServer } from '@tessera/test-support';
import { createRedisClient } from '@tessera/common/redis';

export interface GatewayRedis {
  /** Set once the enclosing describe block's beforeAll has run. */
  server: RedisServer;
  redis: Redis;
}

/**
 * A throw-away redis-server and a connected client with the gateway's production options, for
 * the describe block this is called in; both are stopped after it.
 */
export function useGatewayRedis(): GatewayRedis {
  const handle = useRedisServer(async (url) => {
    const redis = createRedisClient(url, { commandTimeoutMs: 1000, profile: 'server' });
    await redis.connect();
    return redis;
  });
  return {
    get server() {
      return handle.server;
    },
    get redis() {
      return handle.client;
    },
  };
}

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
