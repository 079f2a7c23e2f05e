import {
  createLogger,
  createMetricsRegistry,
  describeWriteAck,
  grpcServerTuning,
  healthServiceOptions,
  limitHeapGrowth,
  loadConfigOrExit,
  loadOrCreateDevSecret,
  rpcObserver,
  startMetricsServer,
  tlsFilesOf,
  type Logger,
  onShutdownSignal,
} from '@tessera/common';
import { isLoopbackAddress, readTlsMaterial, shutdownServer } from '@tessera/protos';
import { configSchema, redisTargetOf, type VaultConfig } from './config';
import { generateKeyRingEntry, parseKeyRing, type EnvKeyRing } from './domain/keyRing';
import { HsmError } from './hsm/pkcs11KeyRing';
import { openKeyRing, type OpenedKeyRing } from './openKeyRing';
import type { CardStore } from './store/cardStore';
import { MemoryCardStore } from './store/memoryCardStore';
import { RedisCardStore } from './store/redisCardStore';
import { createVaultHandlers } from './transport/grpcHandlers';
import { recordAlarmReporter } from './transport/recordAlarms';
import { startVaultServer } from './transport/server';
import { Vault } from './app/vault';

const SHUTDOWN_GRACE_MS = 10_000;
const REDIS_STARTUP_WAIT_MS = 5_000;

/** Outside production only (the config schema enforces that): one generated key kept on disk. */
function developmentKeyRing(config: VaultConfig, logger: Logger): EnvKeyRing {
  const { value, created } = loadOrCreateDevSecret(config.TESSERA_STATE_DIR, 'vault-keys', () => generateKeyRingEntry('dev1'));
  const parsed = parseKeyRing(value);
  if (!parsed.ok) {
    process.stderr.write(
      `[vault] the development key file in ${config.TESSERA_STATE_DIR} is invalid:\n${parsed.problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.exit(78);
  }
  logger.warn(
    { stateDir: config.TESSERA_STATE_DIR, created },
    'VAULT_KEYS is not set: using a DEVELOPMENT key stored on local disk. Never use this outside development; set VAULT_KEYS.',
  );
  return parsed.ring;
}

async function openStore(config: VaultConfig, logger: Logger): Promise<CardStore> {
  const target = redisTargetOf(config);
  if (target === undefined) {
    logger.warn('REDIS_URL is not set: tokens are kept IN MEMORY and a restart loses every token. Development only.');
    return new MemoryCardStore();
  }
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

/** An HSM that cannot be used at start-up stops the vault with the reason (a CKR_* code, never the PIN). */
function loadKeyRing(config: VaultConfig, logger: Logger): OpenedKeyRing {
  try {
    return openKeyRing(config, () => developmentKeyRing(config, logger), logger);
  } catch (err) {
    if (!(err instanceof HsmError)) throw err;
    process.stderr.write(`[vault] the HSM cannot be used: ${err.message}\n`);
    process.exit(78);
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(configSchema, process.env, 'vault');
  const logger = createLogger('vault', config.LOG_LEVEL);
  const keys = loadKeyRing(config, logger);
  const keyRing = keys.ring;
  logger.info(keys.describe, 'key ring loaded');

  const store = await openStore(config, logger);
  const metrics = createMetricsRegistry('vault');
  const vault = new Vault({
    store,
    keyRing,
    cvvTtlSeconds: config.CVV_TTL_SECONDS,
    cardGraceDays: config.CARD_GRACE_DAYS,
    renderMaxBytes: config.RENDER_MAX_BYTES,
    browserTokenTtlSeconds: config.BROWSER_TOKEN_TTL_SECONDS,
    onAlarm: recordAlarmReporter(logger, metrics),
  });
  const tlsFiles = tlsFilesOf(config);
  if (tlsFiles === undefined) {
    if (!isLoopbackAddress(config.VAULT_ADDR)) {
      process.stderr.write(
        `[vault] VAULT_ADDR is not a loopback address: set TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE (plaintext gRPC is for loopback only)\n`,
      );
      process.exit(78);
    }
    logger.warn(
      'TLS is not configured: gRPC runs in PLAINTEXT without caller authentication. Development on loopback only; set TLS_CA_FILE, TLS_CERT_FILE, TLS_KEY_FILE (npm run certs).',
    );
  }
  const tls =
    tlsFiles === undefined
      ? undefined
      : { material: readTlsMaterial(tlsFiles), gatewayName: config.TLS_PEER_GATEWAY, proxyName: config.TLS_PEER_PROXY };
  const { server, port, health } = await startVaultServer(
    config.VAULT_ADDR,
    createVaultHandlers(vault, logger, rpcObserver(metrics)),
    tls,
    async () => (await vault.ready()).ok,
    { tuning: grpcServerTuning(config), health: healthServiceOptions(config) },
  );
  // With VAULT_ADDR port 0 the OS picks the port; log the one actually bound.
  logger.info({ address: config.VAULT_ADDR.replace(/:\d+$/, `:${port}`), tls: tls !== undefined }, 'vault listening');

  const metricsServer =
    config.METRICS_PORT === undefined ? undefined : await startMetricsServer(metrics, config.METRICS_HOST, config.METRICS_PORT, logger);

  onShutdownSignal((signal) => {
    logger.info({ signal }, 'vault shutting down');
    // Watchers hear NOT_SERVING and send new calls to the other replicas while these drain.
    health.shutdown();
    void shutdownServer(server, SHUTDOWN_GRACE_MS)
      .then(() => store.close())
      .then(() => keys.close())
      .then(() => metricsServer?.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'error during shutdown');
          process.exit(1);
        },
      );
  });
}

// Every launcher starts a service here, so this is where its heap policy is set (see heapGrowth.ts).
limitHeapGrowth();
main().catch((err: unknown) => {
  // Before the logger exists or when binding fails; the error may name the address, never key material.
  createLogger('vault').fatal({ err }, 'vault failed to start');
  process.exit(1);
});
