import { createRedisClient } from '@tessera/common/redis';
import { redisTargetOf, type VaultConfig } from './config';
import { RedisImportStore } from './store/importStore';
import { RedisImportCreationStore } from './store/importCreationStore';

/**
 * Card imports on the card store's Redis, over a connection of their own: uploads and reports move
 * megabyte chunks, which must not queue behind (or ahead of) the card writes' deadlines.
 */
export function openImportStore(
  config: Pick<VaultConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_TLS_CA_FILE' | 'REDIS_COMMAND_TIMEOUT_MS'>,
): { store: RedisImportStore; creations: RedisImportCreationStore; ready(timeoutMs: number): Promise<void>; close(): Promise<void> } {
  const target = redisTargetOf(config);
  const redis = createRedisClient('url' in target ? target.url : target.credentialsUrl, {
    // A 1 MiB chunk takes longer than a card command; a stalled Redis still fails the batch, which resumes later.
    commandTimeoutMs: Math.max(config.REDIS_COMMAND_TIMEOUT_MS, 10_000),
    profile: 'server',
    clusterNodes: 'url' in target ? undefined : target.clusterNodes,
    tlsCaFile: target.tlsCaFile,
  });
  redis.on('error', () => undefined);
  return {
    store: new RedisImportStore(redis),
    creations: new RedisImportCreationStore(redis),
    /** The CLI's wait for its connection (the server profile queues nothing while connecting). */
    ready: async (timeoutMs) => {
      if (redis.status === 'wait') await redis.connect().catch(() => undefined);
      const deadline = Date.now() + timeoutMs;
      while (redis.status !== 'ready') {
        if (Date.now() > deadline) throw new Error('Redis is not reachable');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
