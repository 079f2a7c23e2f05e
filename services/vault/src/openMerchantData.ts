import { createLogThrottle, type Logger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import {
  RedisCvcSessionStore,
  RedisEventStore,
  RedisExportFileStore,
  RedisExportOrderStore,
  RedisExportRecipientStore,
  RedisShredOrderStore,
  RedisSweepLease,
} from '@tessera/merchant-data';
import { RedisRouteStore, type RouteReader } from '@tessera/routes';
import type { Redis } from 'ioredis';
import { redisTargetOf, type VaultConfig } from './config';
import { RedisCaKeyStore } from './store/caKeyStore';
import { RedisExpiryIndex } from './store/expiryIndex';

export interface VaultMerchantData {
  /** The merchants' CVC sessions (the grants a CVC-only field attaches under): the gateway opens them, the vault claims them (app/cvcGrants.ts). */
  sessions: RedisCvcSessionStore;
  /** The events the vault records (token.expiring_soon, cvv.expired_unused), their sweeps' lease and the CVV expiry index. */
  events: RedisEventStore;
  lease: RedisSweepLease;
  index: RedisExpiryIndex;
  /** Crypto-shredding orders two operators approved in the admin service (docs/adr/0014); `~tessera:shred:*`. */
  shredOrders: RedisShredOrderStore;
  /** Card export orders, the recipients registered for them and the encrypted files the vault writes (`~tessera:export:*`, `~tessera:export-file:*`). */
  exportOrders: RedisExportOrderStore;
  exportRecipients: RedisExportRecipientStore;
  exportFiles: RedisExportFileStore;
  /** The merchants' route documents, read-only: IssueHostCertificate issues only for a host on an outbound route (ADR 0013). */
  routes: RouteReader;
  /** The merchants' forward-proxy CAs (tessera:ca:*), the vault's own. */
  cas: RedisCaKeyStore;
  close(): Promise<void>;
}

/**
 * What the vault keeps beside the cards, on the card store's Redis or Redis Cluster, over one
 * connection of its own with the servers' per-command deadline: single-key commands and one-slot
 * scripts, which need none of the card writes' acknowledgements (the card store bounds and
 * acknowledges its own). The vault's Redis user may touch `tessera:cvc-session:*` and write
 * `tessera:events:*` for this (deploy/redis/users.acl, docs/adr/0012), read the merchants' routes
 * (`tessera:routes:*`) and keep their forward-proxy CAs (`tessera:ca:*`, ADR 0013). A Redis that is down at
 * start does not stop the start: each claim answers service_unavailable until it is back, and
 * expiry events wait for the next sweep.
 */
export async function openMerchantData(
  config: Pick<VaultConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_TLS_CA_FILE' | 'REDIS_COMMAND_TIMEOUT_MS'> &
    Partial<Pick<VaultConfig, 'VAULT_WRITE_ACK'>>,
  logger: Logger,
): Promise<VaultMerchantData> {
  const target = redisTargetOf(config);
  const redis = createRedisClient('url' in target ? target.url : target.credentialsUrl, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    profile: 'server',
    clusterNodes: 'url' in target ? undefined : target.clusterNodes,
    tlsCaFile: target.tlsCaFile,
  });
  const mayLog = createLogThrottle();
  redis.on('error', (err: Error) => {
    if (mayLog()) logger.error({ err }, 'redis connection error (CVC sessions and events: attaches under a grant answer 503)');
  });
  await redis.connect().catch((err: unknown) => {
    logger.error({ err }, 'redis (CVC sessions and events) is not reachable at start-up; retrying in the background');
  });
  return {
    sessions: new RedisCvcSessionStore(redis),
    events: new RedisEventStore(redis),
    lease: new RedisSweepLease(redis),
    index: new RedisExpiryIndex(redis),
    shredOrders: new RedisShredOrderStore(redis),
    exportOrders: new RedisExportOrderStore(redis),
    exportRecipients: new RedisExportRecipientStore(redis),
    exportFiles: new RedisExportFileStore(redis),
    // The route store reads one hash per merchant (HGETALL, HGET), which a Cluster client runs as a single client does.
    routes: new RedisRouteStore(redis as Redis),
    cas: new RedisCaKeyStore(redis, config.VAULT_WRITE_ACK ?? { kind: 'none' }, logger),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
