import type { Redis } from 'ioredis';
import type { Closable, Logger } from '@tessera/common';
import { connectLogged, createServiceRedis } from '@tessera/edge';
import {
  merchantsWithKeys,
  RedisApiKeyMoveRequests,
  RedisApiKeyStore,
  RedisAuditLog,
  RedisDetokenizationLog,
  RedisEventStore,
  RedisMerchantSettingsStore,
  RedisPageInventoryStore,
  RedisRequestLogStore,
  RedisScriptAuthorizationStore,
  RedisSweepLease,
  RedisWebhookDeliveryStore,
  RedisWebhookEndpointStore,
  RedisShredOrderStore,
  RedisExportFileStore,
  RedisExportOrderStore,
  RedisExportRecipientStore,
} from '@tessera/merchant-data';
import { RedisRateLimitCounter } from '@tessera/edge';
import { RedisRouteStore } from '@tessera/routes';
import type { AdminConfig } from '../config';
import { RedisCardImportRequests } from './cardImportRequests';
import { RedisLoginThrottle, RedisOperatorStore, RedisSessionStore } from './redisAdminStores';

/** Everything the admin service keeps or reads, all of it in the one Redis the gateway writes too. */
export interface AdminStores {
  keyStore: RedisApiKeyStore;
  operators: RedisOperatorStore;
  sessions: RedisSessionStore;
  throttle: RedisLoginThrottle;
  audit: RedisAuditLog;
  detokenizations: RedisDetokenizationLog;
  merchantSettings: RedisMerchantSettingsStore;
  /** Undefined when REQUEST_LOG_MAX_ENTRIES is 0: the gateway keeps none. */
  requestLog: RedisRequestLogStore | undefined;
  /** The gateway's rate-limit windows, where the card-testing limiter marks a key under attack (read only). */
  rateLimits: RedisRateLimitCounter;
  /** The fields service's requests to move publishable keys to the newest pepper (app/pepperMoves.ts). */
  pepperMoves: RedisApiKeyMoveRequests;
  /** What merchants' payment pages reported (the fields service writes it; read only here). */
  pageInventory: RedisPageInventoryStore;
  /** The operators' authorizations of those pages' scripts and policies. */
  scriptAuthorizations: RedisScriptAuthorizationStore;
  /** The events of the key use cases and of the expiring-keys sweep (a resend queues one again), and the lease that sweep runs under. */
  events: RedisEventStore;
  sweepLease: RedisSweepLease;
  /** Merchants' webhook endpoints (the gateway's /v1/webhook-endpoints writes them too). */
  webhookEndpoints: RedisWebhookEndpointStore;
  /** Crypto-shredding orders (tessera:shred:*, docs/adr/0014). */
  shredOrders: RedisShredOrderStore;
  /** Card exports (tessera:export:*; their files tessera:export-file:*, read only here). */
  exportOrders: RedisExportOrderStore;
  exportRecipients: RedisExportRecipientStore;
  exportFiles: RedisExportFileStore;
  /** Card imports asked for, uploaded and reported through the admin API (tessera:import:*, docs/adr/0015). */
  cardImports: RedisCardImportRequests;
  /** The delivery dispatcher's attempt logs and queues (read, resend, dropped with their endpoint). */
  webhookDeliveries: RedisWebhookDeliveryStore;
  /** The merchants' proxy routes (docs/routes.md). */
  routes: RedisRouteStore;
}

export type AdminStoresConfig = Pick<AdminConfig, 'ADMIN_AUDIT_MAX_ENTRIES' | 'REQUEST_LOG_MAX_ENTRIES' | 'REQUEST_LOG_MAX_AGE_SECONDS'>;

export function openAdminStores(redis: Redis, config: AdminStoresConfig): AdminStores {
  return {
    keyStore: new RedisApiKeyStore(redis),
    operators: new RedisOperatorStore(redis),
    sessions: new RedisSessionStore(redis),
    throttle: new RedisLoginThrottle(redis),
    audit: new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES),
    // Read only here: the gateway appends, under its own DETOKENIZATION_AUDIT_MAX_ENTRIES.
    detokenizations: new RedisDetokenizationLog(redis, 0, () => merchantsWithKeys(redis)),
    merchantSettings: new RedisMerchantSettingsStore(redis),
    requestLog:
      config.REQUEST_LOG_MAX_ENTRIES === 0
        ? undefined
        : new RedisRequestLogStore(redis, {
            maxEntries: config.REQUEST_LOG_MAX_ENTRIES,
            maxAgeMs: config.REQUEST_LOG_MAX_AGE_SECONDS * 1000,
          }),
    rateLimits: new RedisRateLimitCounter(redis),
    pepperMoves: new RedisApiKeyMoveRequests(redis),
    pageInventory: new RedisPageInventoryStore(redis),
    scriptAuthorizations: new RedisScriptAuthorizationStore(redis),
    events: new RedisEventStore(redis),
    sweepLease: new RedisSweepLease(redis),
    webhookEndpoints: new RedisWebhookEndpointStore(redis),
    shredOrders: new RedisShredOrderStore(redis),
    exportOrders: new RedisExportOrderStore(redis),
    exportRecipients: new RedisExportRecipientStore(redis),
    exportFiles: new RedisExportFileStore(redis),
    cardImports: new RedisCardImportRequests(redis),
    webhookDeliveries: new RedisWebhookDeliveryStore(redis),
    routes: new RedisRouteStore(redis),
  };
}

/**
 * Connects the admin service's Redis and opens the stores on it. A Redis that is down at start does
 * not stop the start: /readyz reports it, requests that need it answer 503, and ioredis retries.
 */
export async function connectAdminStores(
  config: AdminConfig,
  logger: Logger,
): Promise<{ stores: AdminStores; redis: Redis; clients: Closable[] }> {
  const redis = createServiceRedis(config);
  const stores = openAdminStores(redis, config);
  await connectLogged(redis, logger, 'redis', 'the dashboard answers 503');
  return { stores, redis, clients: [{ name: 'redis', close: () => stores.keyStore.close() }] };
}
