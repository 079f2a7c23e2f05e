import { describeWriteAck, type Logger } from '@tessera/common';
import { redisTargetOf, type VaultConfig } from './config';
import { RedisCardStore } from './store/redisCardStore';

/** How long start-up waits for Redis before it serves anyway (every call answers 503 until Redis is there). */
const REDIS_STARTUP_WAIT_MS = 5_000;

/** The card store the vault serves from: the Redis or Redis Cluster that REDIS_URL / REDIS_CLUSTER_NODES name. */
export async function openCardStore(config: VaultConfig, logger: Logger): Promise<RedisCardStore> {
  const target = redisTargetOf(config);
  const writeAck = describeWriteAck(config.VAULT_WRITE_ACK);
  if (config.VAULT_WRITE_ACK.kind === 'none' && config.NODE_ENV === 'production') {
    logger.warn('VAULT_WRITE_ACK=none: a Redis crash can lose tokens that were already answered 201. Use aof or replica:N.');
  }
  logger.info({ cluster: 'clusterNodes' in target, writeAck }, 'card store: redis');
  const store = RedisCardStore.connect(target, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    logger: logger.child({ component: 'redis' }),
    writeAck: config.VAULT_WRITE_ACK,
  });
  if (!(await store.waitUntilReady(REDIS_STARTUP_WAIT_MS))) {
    logger.warn('redis is not reachable yet: starting anyway, requests fail with service_unavailable until it is');
  }
  return store;
}
