import type { Redis } from 'ioredis';
import { createLogThrottle, type Logger } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';

/** The Redis settings of an HTTP service's config (httpServiceRedisEnvShape, REDIS_URL required). */
export interface ServiceRedisConfig {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: string[];
  REDIS_TLS_CA_FILE?: string | undefined;
  REDIS_COMMAND_TIMEOUT_MS: number;
}

/** The Redis client an HTTP service keeps its state in (not yet connected: see connectLogged). */
export function createServiceRedis(config: ServiceRedisConfig): Redis {
  return createRedisClient(config.REDIS_URL, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    profile: 'server',
    tlsCaFile: config.REDIS_TLS_CA_FILE,
    clusterNodes: config.REDIS_CLUSTER_NODES,
  });
}

/**
 * Connects `client`, logging its errors at most every 10 s: ioredis emits one on every reconnect
 * attempt. A Redis that is down at start does not stop the start: /readyz reports it, requests that
 * need it answer 503 (`whileDown` says so in the log), and ioredis keeps retrying.
 */
export async function connectLogged(client: Redis, logger: Logger, name: string, whileDown: string): Promise<void> {
  const mayLog = createLogThrottle();
  client.on('error', (err: Error) => {
    if (mayLog()) logger.error({ err }, `${name} connection error (${whileDown})`);
  });
  await client.connect().catch((err: unknown) => {
    logger.error({ err }, `${name} is not reachable at start-up; retrying in the background`);
  });
}
