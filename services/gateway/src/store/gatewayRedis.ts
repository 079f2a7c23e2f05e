import type { Redis } from 'ioredis';
import type { Closable, Logger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { connectLogged, createServiceRedis } from '@tessera/edge';
import type { GatewayConfig } from '../config';
import { openGatewayStores, type GatewayStores } from './gatewayStores';
import type { LegacyRecords } from './idempotencyStore';
import { legacyKeyPrefix, legacyRecordsReadUntil, startLayoutMigration } from './layoutMigration';

export interface ConnectedStores {
  stores: GatewayStores;
  /** The Redis of the keys and everything else (not the idempotency Redis of its own). */
  redis: Redis;
  /** Whether the merchant-slot layout is in place (a /readyz check). */
  layoutReady: () => boolean;
  /** Closed after the listeners drained: the idempotency Redis of its own, if any, then the main one. */
  clients: Closable[];
}

/**
 * Connects the gateway's Redis (and IDEMPOTENCY_REDIS_URL's, when idempotency records have a Redis
 * of their own, so no flood of them can fill the memory the keys need) and opens the stores on it.
 * A Redis that is down at start does not stop the start: /readyz reports it, requests that need it
 * answer 503, and ioredis keeps retrying. The old layout's keys are copied to their merchants'
 * slots before anything reads keys.
 */
export async function connectGatewayStores(config: GatewayConfig, logger: Logger): Promise<ConnectedStores> {
  const clustered = config.REDIS_CLUSTER_NODES !== undefined && config.REDIS_CLUSTER_NODES.length > 0;
  const options = { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS, profile: 'server', tlsCaFile: config.REDIS_TLS_CA_FILE } as const;
  const redis = createServiceRedis(config);
  const idempotencyRedis =
    config.IDEMPOTENCY_REDIS_URL === undefined ? undefined : createRedisClient(config.IDEMPOTENCY_REDIS_URL, options);
  // Idempotency records of the layout before merchant slots are read until the upgrade says none
  // can be alive any more; until it has run (Redis down at start), they are read.
  const legacyIdempotency: LegacyRecords = {
    // A Redis of their own is standalone: no prefix there before either.
    keyPrefix: idempotencyRedis === undefined ? legacyKeyPrefix(clustered) : '',
    readUntil: Number.POSITIVE_INFINITY,
  };
  const stores = openGatewayStores(redis, idempotencyRedis, config, { logger, legacyIdempotency });
  await connectLogged(redis, logger, 'redis', 'API keys unavailable: requests answer 503');
  const migration = startLayoutMigration(redis, {
    clustered,
    logger,
    onMarker: (marker) => {
      legacyIdempotency.readUntil = legacyRecordsReadUntil(marker, config.IDEMPOTENCY_TTL_SECONDS * 1000);
    },
  });
  await migration.firstAttempt;
  if (idempotencyRedis !== undefined) {
    await connectLogged(idempotencyRedis, logger, 'idempotency redis', 'requests with an Idempotency-Key answer 503');
  }
  return {
    stores,
    redis,
    layoutReady: migration.ready,
    clients: [
      ...(idempotencyRedis ? [{ name: 'idempotency redis', close: () => idempotencyRedis.disconnect() }] : []),
      { name: 'redis', close: () => stores.keyStore.close() },
    ],
  };
}
