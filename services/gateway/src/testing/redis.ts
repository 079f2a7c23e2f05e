import type { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../../../../test/support/redisServer';
import { createRedisClient } from '../store/redisApiKeyStore';

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
  const handle = {} as GatewayRedis;
  beforeAll(async () => {
    handle.server = await startRedisServer();
    handle.redis = createRedisClient(handle.server.url, { commandTimeoutMs: 1000, profile: 'server' });
    await handle.redis.connect();
  });
  afterAll(async () => {
    handle.redis?.disconnect();
    await handle.server?.stop();
  });
  return handle;
}
