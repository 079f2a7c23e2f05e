import type { Redis } from 'ioredis';
import { createLogger } from '@tessera/common';
import {
  RedisApiKeyStore,
  RedisAuditLog,
  RedisEventStore,
  RedisWebhookDeliveryStore,
  RedisWebhookEndpointStore,
  RedisShredOrderStore,
} from '@tessera/merchant-data';
import { webhookDeliveriesOver } from '../app/webhookDeliveriesPort';
import type { AdminDeps } from '../transport/adminRouter';
import { RedisLoginThrottle, RedisOperatorStore, RedisSessionStore } from '../store/redisAdminStores';
import { TEST_PEPPER } from '../../../../packages/merchant-data/src/testing/fixtures';

// Shared with the merchant-data package's tests.
export { aKeyRecord, aRequest, TEST_PEPPER } from '../../../../packages/merchant-data/src/testing/fixtures';

/**
 * What the admin router needs: the stores on `redis` (a test's private server; flush it between
 * tests that need them empty), the test pepper, generous sign-in limits (a test that is about
 * limits says its own), no trusted proxies, a silent logger.
 */
export function anAdminDeps(redis: Redis, overrides: Partial<AdminDeps> = {}): AdminDeps {
  return {
    keyStore: new RedisApiKeyStore(redis),
    operators: new RedisOperatorStore(redis),
    sessions: new RedisSessionStore(redis),
    throttle: new RedisLoginThrottle(redis),
    audit: new RedisAuditLog(redis, 1000),
    webhookEndpoints: new RedisWebhookEndpointStore(redis),
    shredOrders: new RedisShredOrderStore(redis),
    webhookDeliveries: webhookDeliveriesOver(new RedisWebhookDeliveryStore(redis), new RedisEventStore(redis)),
    pepper: TEST_PEPPER,
    trustedProxies: [],
    logger: createLogger('admin-test', 'silent'),
    ...overrides,
    config: {
      ADMIN_SESSION_IDLE_SECONDS: 900,
      ADMIN_SESSION_MAX_SECONDS: 28_800,
      ADMIN_LOGIN_WINDOW_SECONDS: 3600,
      ADMIN_LOGIN_MAX_PER_IP: 1000,
      ADMIN_LOGIN_MAX_PER_ACCOUNT: 100,
      ...overrides.config,
    },
  };
}
