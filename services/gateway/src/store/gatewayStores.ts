import {
  merchantsWithKeys,
  RedisDetokenizationLog,
  RedisMerchantSettingsStore,
  RedisRequestLogStore,
  type RequestLogRetention,
} from '@tessera/merchant-data';
import type { Redis } from 'ioredis';
import type { Logger } from '@tessera/common';
import type { GatewayConfig } from '../config';
import { RedisCvcSessionStore } from '@tessera/merchant-data';
import { RedisKeyStoreWithPeek } from '@tessera/edge';
import { RedisDistinctCardCounter } from '@tessera/edge';
import { RedisEventStore, RedisFormSessionStore, RedisWebhookEndpointStore } from '@tessera/merchant-data';
import { RedisIdempotencyStore, type LegacyRecords } from './idempotencyStore';
import { RedisRateLimitCounter } from '@tessera/edge';
import { RedisRouteStore, type RouteReader } from '@tessera/routes';

/** Everything a gateway process keeps, all of it in Redis and so shared by every replica and worker. */
export interface GatewayStores {
  keyStore: RedisKeyStoreWithPeek;
  detokenizations: RedisDetokenizationLog;
  merchantSettings: RedisMerchantSettingsStore;
  requestLog: RedisRequestLogStore;
  /** Per-key request windows, of the API's rate limit and of the card-testing limits alike. */
  rateLimits: RedisRateLimitCounter;
  distinctCards: RedisDistinctCardCounter;
  idempotency: RedisIdempotencyStore;
  formSessions: RedisFormSessionStore;
  cvcSessions: RedisCvcSessionStore;
  events: RedisEventStore;
  webhookEndpoints: RedisWebhookEndpointStore;
  /** The merchants' outbound routes, read by the forward proxy (written by the admin service only). */
  routes: RouteReader;
}

export type GatewayStoresConfig = Pick<
  GatewayConfig,
  | 'DETOKENIZATION_AUDIT_MAX_ENTRIES'
  | 'REQUEST_LOG_MAX_ENTRIES'
  | 'REQUEST_LOG_MAX_AGE_SECONDS'
  | 'IDEMPOTENCY_WRITE_ACK'
  | 'EVENT_RETENTION_DAYS'
>;

export function requestLogRetention(
  config: Pick<GatewayConfig, 'REQUEST_LOG_MAX_ENTRIES' | 'REQUEST_LOG_MAX_AGE_SECONDS'>,
): RequestLogRetention {
  return { maxEntries: config.REQUEST_LOG_MAX_ENTRIES, maxAgeMs: config.REQUEST_LOG_MAX_AGE_SECONDS * 1000 };
}

/**
 * The gateway's stores on `redis`; idempotency records on `idempotencyRedis` when they have a
 * Redis of their own (IDEMPOTENCY_REDIS_URL). `legacyIdempotency`: see layoutMigration.ts.
 */
export function openGatewayStores(
  redis: Redis,
  idempotencyRedis: Redis | undefined,
  config: GatewayStoresConfig,
  options: { logger: Logger; legacyIdempotency?: LegacyRecords },
): GatewayStores {
  return {
    keyStore: new RedisKeyStoreWithPeek(redis),
    detokenizations: new RedisDetokenizationLog(redis, config.DETOKENIZATION_AUDIT_MAX_ENTRIES, () => merchantsWithKeys(redis)),
    merchantSettings: new RedisMerchantSettingsStore(redis),
    requestLog: new RedisRequestLogStore(redis, requestLogRetention(config)),
    rateLimits: new RedisRateLimitCounter(redis),
    distinctCards: new RedisDistinctCardCounter(redis),
    idempotency: new RedisIdempotencyStore(
      idempotencyRedis ?? redis,
      { writeAck: config.IDEMPOTENCY_WRITE_ACK, logger: options.logger },
      options.legacyIdempotency,
    ),
    formSessions: new RedisFormSessionStore(redis),
    cvcSessions: new RedisCvcSessionStore(redis),
    events: new RedisEventStore(redis, config.EVENT_RETENTION_DAYS),
    webhookEndpoints: new RedisWebhookEndpointStore(redis),
    routes: new RedisRouteStore(redis),
  };
}
