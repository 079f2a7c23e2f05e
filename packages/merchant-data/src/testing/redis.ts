import type { Redis } from 'ioredis';
import { useRedisServer, type RedisServer } from '@tessera/test-support';
import { createRedisClient } from '@tessera/common/redis';

export interface StoreRedis {
  /** Set once the enclosing describe block's beforeAll has run. */
  server: RedisServer;
  redis: Redis;
}

/**
 * A throw-away redis-server and a connected client with the services' production options, for
 * the describe block this is called in; both are stopped after it.
 */
export function useStoreRedis(): StoreRedis {
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
