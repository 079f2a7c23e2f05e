import { createLogThrottle, type Logger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { RedisDistinctCardCounter, RedisRateLimitCounter } from '@tessera/edge';
import { RedisApiKeyMoveRequests, RedisApiKeyStore, RedisFormSessionStore } from '@tessera/merchant-data';
import type { FieldsConfig } from '../config';

/** What the fields service keeps in Redis, through the narrowest interface each use needs. */
export interface FieldsStores {
  /** Publishable keys: looked up, never created or moved here (its Redis user may not write the digest index). */
  keyStore: RedisApiKeyStore;
  /** Where it asks the admin service to move a key to the newest pepper (app/pepperMoves.ts). */
  pepperMoves: RedisApiKeyMoveRequests;
  formSessions: RedisFormSessionStore;
  /** The card-testing windows and the failed-authentication limit. */
  rateLimits: RedisRateLimitCounter;
  distinctCards: RedisDistinctCardCounter;
}

/**
 * Connects Redis and opens the stores on it. A Redis that is down at start does not stop the
 * start: /readyz reports it, the routes that need it answer 503, and ioredis keeps retrying.
 */
export async function connectFieldsStores(config: FieldsConfig, logger: Logger): Promise<{ stores: FieldsStores; close(): Promise<void> }> {
  const redis = createRedisClient(config.REDIS_URL, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    profile: 'server',
    tlsCaFile: config.REDIS_TLS_CA_FILE,
    clusterNodes: config.REDIS_CLUSTER_NODES,
  });
  const stores: FieldsStores = {
    keyStore: new RedisApiKeyStore(redis),
    pepperMoves: new RedisApiKeyMoveRequests(redis),
    formSessions: new RedisFormSessionStore(redis),
    rateLimits: new RedisRateLimitCounter(redis),
    distinctCards: new RedisDistinctCardCounter(redis),
  };
  // ioredis emits an error on every reconnect attempt: logged at most every 10 s.
  const mayLog = createLogThrottle();
  redis.on('error', (err: Error) => {
    if (mayLog()) logger.error({ err }, 'redis connection error (the card fields answer 503)');
  });
  await redis.connect().catch((err: unknown) => {
    logger.error({ err }, 'redis is not reachable at start-up; retrying in the background');
  });
  return { stores, close: () => stores.keyStore.close() };
}
