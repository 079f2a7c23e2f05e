import type { TokenRecord__Output } from '@tessera/protos';
import type { ProxyApi, VaultApi } from '../app/ports';
import type { Redis } from 'ioredis';
import type { GatewayDeps } from '../transport/app';
import { RedisIdempotencyStore } from '../store/idempotencyStore';

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
