import type { Logger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { RedisCvcSessionStore } from '@tessera/merchant-data';
import { redisTargetOf, type VaultConfig } from './config';

/**
 * The merchants' CVC sessions (the grants a CVC-only field attaches under), on the card store's
 * Redis or Redis Cluster: the gateway opens them there, the vault claims them (app/cvcGrants.ts).
 * A connection of its own with the servers' per-command deadline: the card store's bounds its
 * operations itself and waits for write acknowledgements these single-key scripts do not need.
 * The vault's Redis user may touch `tessera:cvc-session:*` (deploy/redis/users.acl).
 */
export function openCvcSessions(config: VaultConfig, logger: Logger): { sessions: RedisCvcSessionStore; close: () => Promise<void> } {
  const target = redisTargetOf(config);
  const redis = createRedisClient('url' in target ? target.url : target.credentialsUrl, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    profile: 'server',
    clusterNodes: 'url' in target ? undefined : target.clusterNodes,
    tlsCaFile: target.tlsCaFile,
    lazyConnect: false,
  });
  // ioredis reconnects by itself; meanwhile each claim answers service_unavailable. The card
  // store's connection logs the outage too, so one line per distinct error is enough here.
  let lastError: string | undefined;
  redis.on('error', (err: Error) => {
    if (err.message !== lastError) logger.warn({ err, redisStatus: redis.status }, 'redis connection error (CVC sessions)');
    lastError = err.message;
  });
  redis.on('ready', () => (lastError = undefined));
  return {
    sessions: new RedisCvcSessionStore(redis),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
