import type { Logger } from '@tessera/common';
import { connectLogged, createServiceRedis, RedisDistinctCardCounter, RedisRateLimitCounter } from '@tessera/edge';
import {
  RedisApiKeyMoveRequests,
  RedisApiKeyStore,
  RedisEventStore,
  RedisFormSessionStore,
  RedisPageInventoryStore,
  RedisSweepLease,
} from '@tessera/merchant-data';
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
  /** What merchants' payment pages report (the SAQ A kit); the operators' authorizations are the admin service's. */
  pageInventory: RedisPageInventoryStore;
  /** The events it emits (form sessions, card testing), and the lease its sweep runs under. */
  events: RedisEventStore;
  sweepLease: RedisSweepLease;
}

/**
 * Connects Redis and opens the stores on it. A Redis that is down at start does not stop the
 * start: /readyz reports it, the routes that need it answer 503, and ioredis keeps retrying.
 */
export async function connectFieldsStores(config: FieldsConfig, logger: Logger): Promise<{ stores: FieldsStores; close(): Promise<void> }> {
  const redis = createServiceRedis(config);
  const stores: FieldsStores = {
    keyStore: new RedisApiKeyStore(redis),
    pepperMoves: new RedisApiKeyMoveRequests(redis),
    formSessions: new RedisFormSessionStore(redis),
    rateLimits: new RedisRateLimitCounter(redis),
    distinctCards: new RedisDistinctCardCounter(redis),
    pageInventory: new RedisPageInventoryStore(redis),
    events: new RedisEventStore(redis),
    sweepLease: new RedisSweepLease(redis),
  };
  await connectLogged(redis, logger, 'redis', 'the card fields answer 503');
  return { stores, close: () => stores.keyStore.close() };
}
