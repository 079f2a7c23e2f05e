import { createLogThrottle, type Logger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { RedisEventStore, RedisSweepLease } from '@tessera/merchant-data';
import { redisTargetOf, type VaultConfig } from './config';
import { RedisExpiryIndex } from './store/expiryIndex';

/**
 * The events the vault records (token.expiring_soon, cvv.expired_unused), their sweeps' lease and
 * the expiry index, on a connection of their own to the card store's Redis: single-key commands
 * and the event store's one-slot scripts, which need none of the card writes' acknowledgements.
 * The vault's Redis user may write `tessera:events:*` for this and nothing else new
 * (deploy/redis/users.acl, docs/adr/0012). A Redis down at start does not stop the start.
 */
export async function openVaultEvents(
  config: Pick<VaultConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_TLS_CA_FILE' | 'REDIS_COMMAND_TIMEOUT_MS'>,
  logger: Logger,
): Promise<{ events: RedisEventStore; lease: RedisSweepLease; index: RedisExpiryIndex; close: () => Promise<void> }> {
  const target = redisTargetOf(config);
  const redis = createRedisClient('url' in target ? target.url : target.credentialsUrl, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    profile: 'server',
    clusterNodes: 'url' in target ? undefined : target.clusterNodes,
    tlsCaFile: target.tlsCaFile,
  });
  const mayLog = createLogThrottle();
  redis.on('error', (err: Error) => {
    if (mayLog()) logger.error({ err }, 'redis connection error (events: expiry events wait for the next sweep)');
  });
  await redis.connect().catch((err: unknown) => {
    logger.error({ err }, 'redis (events) is not reachable at start-up; retrying in the background');
  });
  return {
    events: new RedisEventStore(redis),
    lease: new RedisSweepLease(redis),
    index: new RedisExpiryIndex(redis),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
