import { RedisApiKeyStore, RedisAuditLog } from '@tessera/merchant-data';
import type { TokenRecord__Output } from '@tessera/protos';
import type { AdminDeps } from '../transport/admin/adminRouter';
import type { ProxyApi, VaultApi } from '../app/ports';
import type { Redis } from 'ioredis';
import type { GatewayDeps } from '../transport/app';
import { RedisIdempotencyStore } from '../store/idempotencyStore';
import { RedisLoginThrottle, RedisOperatorStore, RedisSessionStore } from '../store/redisAdminStores';

import { createLogger } from '@tessera/common';
import { TEST_PEPPER } from '../../../../packages/merchant-data/src/testing/fixtures';

// Shared with the merchant-data package's tests.
export { aKeyRecord, aRequest, TEST_PEPPER } from '../../../../packages/merchant-data/src/testing/fixtures';
export { captureLogger } from '../../../../packages/edge/src/testing/logger';
export { aCardBody, aTokenRecord, recordingTokenize } from '../../../../packages/edge/src/testing/tokenRecords';
import { aTokenRecord } from '../../../../packages/edge/src/testing/tokenRecords';

/** Upstreams for tests that only read a token: the vault answers GET /v1/token with `record`, both are ready. */
export function tokenReadingUpstreams(record: TokenRecord__Output = aTokenRecord()): { vault: VaultApi; proxy: ProxyApi } {
  const ready = async () => ({ ready: true, detail: '' });
  return {
    vault: { getToken: async () => record, ready, close() {} } as unknown as VaultApi,
    proxy: { ready, close() {} } as unknown as ProxyApi,
  };
}

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
    pepper: TEST_PEPPER,
    trustedProxies: [],
    logger: createLogger('gateway-test', 'silent'),
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

const idempotencyOf = new WeakMap<Redis, GatewayDeps['idempotency']>();

/**
 * Idempotency-Key answers on `redis` with the configuration's default limits; one per client,
 * since each store watches its client's reconnects.
 */
export function anIdempotency(redis: Redis): GatewayDeps['idempotency'] {
  let deps = idempotencyOf.get(redis);
  if (deps === undefined) {
    deps = {
      store: new RedisIdempotencyStore(redis),
      ttlMs: 86_400_000,
      lockTtlMs: 60_000,
      maxStoredBytes: 65_536,
      maxBytesPerMerchant: 134_217_728,
    };
    idempotencyOf.set(redis, deps);
  }
  return deps;
}
