import { createLogThrottle, type Logger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { RedisCvcSessionStore } from '@tessera/merchant-data';
import { redisTargetOf, type VaultConfig } from './config';

/**
 * The merchants' CVC sessions (the grants a CVC-only field attaches under), on the card store's
 * Redis or Redis Cluster: the gateway opens them there, the vault claims them (app/cvcGrants.ts).
 * A connection of its own with the servers' per-command deadline: the card store's bounds its
 * operations itself and waits for write acknowledgements these single-key scripts do not need.
 * The vault's Redis user may touch `tessera:cvc-session:*` (deploy/redis/users.acl). A Redis that
 * is down at start does not stop the start: each claim answers service_unavailable until it is back.
 */
export async function openCvcSessions(
  config: Pick<VaultConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_TLS_CA_FILE' | 'REDIS_COMMAND_TIMEOUT_MS'>,
  logger: Logger,
): Promise<{ sessions: RedisCvcSessionStore; close: () => Promise<void> }> {
  const target = redisTargetOf(config);
  const redis = createRedisClient('url' in target ? target.url : target.credentialsUrl, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    profile: 'server',
    clusterNodes: 'url' in target ? undefined : target.clusterNodes,
    tlsCaFile: target.tlsCaFile,
  });
  const mayLog = createLogThrottle();
  redis.on('error', (err: Error) => {
    if (mayLog()) logger.error({ err }, 'redis connection error (CVC sessions: attaches under a grant answer 503)');
  });
  await redis.connect().catch((err: unknown) => {
    logger.error({ err }, 'redis (CVC sessions) is not reachable at start-up; retrying in the background');
  });
  return {
    sessions: new RedisCvcSessionStore(redis),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
