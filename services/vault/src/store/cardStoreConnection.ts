import { createRedisClient, type RedisClient } from '@tessera/common/redis';

/**
 * Where the card store lives: one Redis (URL) or a Redis Cluster (seed nodes); `tlsCaFile`
 * (REDIS_TLS_CA_FILE) is the CA of Redis's certificate when the URL is rediss://.
 */
export type RedisTarget = ({ url: string } | { clusterNodes: readonly string[]; credentialsUrl?: string | undefined }) & {
  tlsCaFile?: string | undefined;
};

/**
 * A Redis or Redis Cluster client that fails fast (503) instead of queueing during an outage.
 * REDIS_URL, when set beside the nodes, lends its credentials and TLS to every node.
 */
export function connectRedis(target: RedisTarget, commandTimeoutMs: number): RedisClient {
  return createRedisClient('url' in target ? target.url : target.credentialsUrl, {
    commandTimeoutMs,
    profile: 'server',
    clusterNodes: 'url' in target ? undefined : target.clusterNodes,
    tlsCaFile: target.tlsCaFile,
    // The store bounds each operation as a whole (withinDeadline), which covers its commands.
    commandDeadline: false,
    // Connect at once: the vault's start waits for Redis (waitUntilReady).
    lazyConnect: false,
    connectTimeoutMs: Math.max(commandTimeoutMs, 1000),
  });
}
