import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import {
  createLogger,
  createMetricsRegistry,
  grpcClientTuning,
  limitHeapGrowth,
  loadConfigOrExit,
  startMetricsServer,
  tlsFilesOf,
  onShutdownSignal,
} from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import {
  clientChannelOptions,
  clientCredentials,
  createProxyClient,
  createVaultClient,
  readTlsMaterial,
  tlsChannelOptions,
} from '@tessera/protos';
import { registerDevKey, type DevKeyRegistration } from './devKey';
import { superviseWorkers } from './cluster';
import { browserOriginsOf, gatewayConfigSchema, resolveApiKeyPepper } from './config';
import type { FormSessionDeps } from './app/formSessions';
import { openGatewayStores, requestLogRetention } from './store/gatewayStores';
import { legacyKeyPrefix, legacyRecordsReadUntil, startLayoutMigration } from './store/layoutMigration';
import { RateLimiter } from './transport/rateLimit';
import { BrowserTokenLimiter, browserAttackCounter, browserRefusalCounter } from './transport/browserLimits';
import { cardFingerprintKey } from './domain/browserLimits';
import { challengeHmacKey } from './domain/browserChallenge';
import { createApp } from './transport/app';
import { drainDeadlineMs, installDrain } from './transport/drain';
import type { LegacyRecords } from './store/idempotencyStore';
import { setUpAdmin } from './adminSetup';
import { setUpFields } from './fieldsSetup';
import { proxyApiFromClient, vaultApiFromClient } from './transport/upstreams';
import { RequestLogRecorder, type RequestLogDeps } from './app/requestLog';

const SERVICE = 'gateway';

async function main(): Promise<void> {
  const config = loadConfigOrExit(gatewayConfigSchema, process.env, SERVICE);
  const rootLogger = createLogger(SERVICE, config.LOG_LEVEL);
  // Workers (GATEWAY_WORKERS > 1) share one output stream: each line says which worker wrote it.
  const logger = cluster.isWorker ? rootLogger.child({ worker: cluster.worker?.id }) : rootLogger;
  const { pepper, previousPeppers } = resolveApiKeyPepper(config, logger);
  // After the pepper: a development pepper file is created once, here, before workers read it.
  if (config.GATEWAY_WORKERS > 1 && cluster.isPrimary) {
    // Each worker drains for up to drainDeadlineMs; the primary waits a little longer before it kills them.
    superviseWorkers({ workers: config.GATEWAY_WORKERS, stopGraceMs: drainDeadlineMs(config.PROXY_TIMEOUT_MS) + 4_000 }, logger);
    return;
  }

  const devKey = config.TESSERA_DEV_API_KEY;
  // Idempotency records of the layout before merchant slots are read until the upgrade says none
  // can be alive any more; until it has run (Redis down at start), they are read.
  const clustered = config.REDIS_CLUSTER_NODES !== undefined && config.REDIS_CLUSTER_NODES.length > 0;
  const legacyIdempotency: LegacyRecords = {
    // A Redis of their own (IDEMPOTENCY_REDIS_URL) is standalone: no prefix there before either.
    keyPrefix: config.IDEMPOTENCY_REDIS_URL === undefined ? legacyKeyPrefix(clustered) : '',
    readUntil: Number.POSITIVE_INFINITY,
  };
  const redis = createRedisClient(config.REDIS_URL, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    clusterNodes: config.REDIS_CLUSTER_NODES,
    profile: 'server',
    tlsCaFile: config.REDIS_TLS_CA_FILE,
  });
  // Idempotency records may have a Redis of their own (IDEMPOTENCY_REDIS_URL): then no flood of
  // them can fill the memory the card store and the keys need. While it is down, only requests
  // with an Idempotency-Key fail (503). Connected further down.
  const idempotencyRedis =
    config.IDEMPOTENCY_REDIS_URL === undefined
      ? undefined
      : createRedisClient(config.IDEMPOTENCY_REDIS_URL, {
          commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
          profile: 'server',
          tlsCaFile: config.REDIS_TLS_CA_FILE,
        });
  const stores = openGatewayStores(redis, idempotencyRedis, config, { logger, legacyIdempotency });
  const keyStore = stores.keyStore;
  let lastErrorLog = 0;
  redis.on('error', (err: Error) => {
    // ioredis emits on every reconnect attempt; one line every 10s is enough to notice.
    if (Date.now() - lastErrorLog > 10_000) {
      lastErrorLog = Date.now();
      logger.error({ err }, 'redis connection error (API keys unavailable: requests answer 503)');
    }
  });
  try {
    await redis.connect();
  } catch (err) {
    // Keep starting: /readyz reports the store, requests get 503 and ioredis keeps retrying.
    logger.error({ err }, 'redis is not reachable at start-up; retrying in the background');
  }
  // Before anything reads keys: the old layout's keys are copied to their merchants' slots.
  const migration = startLayoutMigration(redis, {
    clustered,
    logger,
    onMarker: (marker) => {
      legacyIdempotency.readUntil = legacyRecordsReadUntil(marker, config.IDEMPOTENCY_TTL_SECONDS * 1000);
    },
  });
  await migration.firstAttempt;
  // Awaited (its first attempt) so the key works as soon as 'gateway listening' is logged; it
  // retries with backoff until Redis takes the write.
  const devKeyRegistration: DevKeyRegistration | undefined =
    devKey === undefined ? undefined : registerDevKey({ keyStore, apiKey: devKey, pepper, logger });
  await devKeyRegistration?.firstAttempt;
  // Attached after the first attempt so start-up registers once. Registering again on every
  // reconnect (it is idempotent) covers a Redis that came back empty.
  redis.on('ready', () => {
    logger.info('redis connected');
    devKeyRegistration?.again();
  });

  // mTLS to vault and proxy (npm run certs); plaintext only in development, which the config enforces.
  const tlsFiles = tlsFilesOf(config);
  const tls = tlsFiles === undefined ? undefined : readTlsMaterial(tlsFiles);
  if (tls === undefined) logger.warn('TLS is not configured: calls to vault and proxy are PLAINTEXT. Development on loopback only.');
  // Each balances round_robin over every replica its target resolves to that reports SERVING.
  const keepalive = clientChannelOptions(grpcClientTuning(config));
  const vault = vaultApiFromClient(
    createVaultClient(config.VAULT_ADDR, clientCredentials(tls), { ...keepalive, ...tlsChannelOptions(tls, config.TLS_PEER_VAULT) }),
    config.VAULT_TIMEOUT_MS,
  );
  const proxy = proxyApiFromClient(
    createProxyClient(config.PROXY_ADDR, clientCredentials(tls), { ...keepalive, ...tlsChannelOptions(tls, config.TLS_PEER_PROXY) }),
    config.PROXY_TIMEOUT_MS,
  );
  // The dashboard shares the key store and Redis connection; see adminSetup.ts for ADMIN_PORT.
  const { detokenizations, merchantSettings } = stores;
  const metrics = createMetricsRegistry('gateway');
  // The merchants' request log: written after each answer, in batches (app/requestLog.ts).
  const retention = requestLogRetention(config);
  const requestLogStore = stores.requestLog;
  const requestLog: RequestLogDeps | undefined =
    config.REQUEST_LOG_MAX_ENTRIES === 0 ? undefined : { store: requestLogStore, maxAgeMs: retention.maxAgeMs, now: () => new Date() };
  const requestLogRecorder =
    requestLog === undefined
      ? undefined
      : new RequestLogRecorder(requestLogStore, logger, { maxBuffered: config.REQUEST_LOG_BUFFER_ENTRIES, metrics });
  // Card testing (browser tokenization); the dashboard shows which keys it holds under attack.
  const browserLimiter = new BrowserTokenLimiter({
    counter: stores.rateLimits,
    cards: stores.distinctCards,
    config,
    fingerprintKey: cardFingerprintKey(pepper),
    challengeKey: challengeHmacKey(config.BROWSER_CHALLENGE_HMAC_KEY, pepper),
    logger,
    onRefused: browserRefusalCounter(metrics),
    onAttackRequest: browserAttackCounter(metrics),
  });
  const admin = await setUpAdmin({
    config,
    logger,
    keyStore,
    pepper,
    previousPeppers,
    stores: stores.admin,
    detokenizations,
    merchantSettings,
    ...(requestLog ? { requestLog } : {}),
    cardTesting: browserLimiter,
  });
  // Counters live where the keys live: in Redis they are shared by every replica and worker.
  const rateLimiter = new RateLimiter(stores.rateLimits, config, logger);
  if (idempotencyRedis !== undefined) {
    let lastErrorLog = 0;
    idempotencyRedis.on('error', (err: Error) => {
      if (Date.now() - lastErrorLog > 10_000) {
        lastErrorLog = Date.now();
        logger.error({ err }, 'idempotency redis connection error (requests with an Idempotency-Key answer 503)');
      }
    });
    await idempotencyRedis.connect().catch((err: unknown) => {
      logger.error({ err }, 'the idempotency redis is not reachable at start-up; retrying in the background');
    });
  }
  // Claims outlive the longest request (a whole proxy call) so a duplicate never runs beside it;
  // a claim left by a gateway that died mid-request is then answered as outcome unknown for
  // /v1/proxy, and run again for /v1/token (see transport/idempotency.ts).
  const idempotency = {
    store: stores.idempotency,
    ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000,
    lockTtlMs: config.PROXY_TIMEOUT_MS + 10_000,
    maxStoredBytes: config.IDEMPOTENCY_MAX_STORED_BYTES,
    maxBytesPerMerchant: config.IDEMPOTENCY_MAX_BYTES_PER_MERCHANT,
  };
  // The hosted payment page: sessions opened on the API, used on the fields origin (both need the origins).
  const browserOrigins = browserOriginsOf(config);
  const formSessions: FormSessionDeps | undefined =
    browserOrigins === undefined
      ? undefined
      : {
          sessions: stores.formSessions,
          merchantSettings,
          vault,
          pepper,
          fieldsOrigin: browserOrigins.fields,
          ttlSeconds: config.FORM_SESSION_TTL_SECONDS,
          now: () => new Date(),
        };
  const fields = setUpFields({
    config,
    logger,
    keyStore,
    pepper,
    previousPeppers,
    ...(formSessions ? { formSessions } : {}),
    cardTesting: browserLimiter,
  });
  const app = createApp({
    config,
    logger,
    keyStore,
    pepper,
    previousPeppers,
    vault,
    proxy,
    admin: admin.router,
    rateLimiter,
    // The counters and merchant settings above are in the same Redis as the keys.
    keyLookupWithPeek: keyStore,
    idempotency,
    metrics,
    detokenizations,
    ...(requestLogRecorder ? { requestLog: requestLogRecorder } : {}),
    merchantSettings,
    // Until the quick-start key is registered, requests with it fail: not ready.
    readyChecks: {
      redisLayout: migration.ready,
      ...(devKeyRegistration ? { devApiKey: () => devKeyRegistration.registered } : {}),
    },
    ...(fields.origins
      ? {
          browser: {
            fieldsOrigin: fields.origins.fields,
            limiter: browserLimiter,
            provisionalTtlUnderAttackSeconds: config.BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS,
          },
        }
      : {}),
    ...(formSessions ? { formSessions } : {}),
    cvcSessions: {
      sessions: stores.cvcSessions,
      ttlSeconds: config.CVC_SESSION_TTL_SECONDS,
      now: () => new Date(),
    },
  });

  const server = app.listen(config.PORT, config.HOST);
  const drain = installDrain(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // A PSP call may legitimately take PROXY_TIMEOUT_MS; Node's defaults must not cut it short.
  server.requestTimeout = config.PROXY_TIMEOUT_MS + 30_000;
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  await admin.listen();
  await fields.listen();
  // With GATEWAY_WORKERS > 1 the workers share this port too, and each scrape reads one worker.
  const metricsServer =
    config.METRICS_PORT === undefined ? undefined : await startMetricsServer(metrics, config.METRICS_HOST, config.METRICS_PORT, logger);
  logger.info({ url: `http://${host}:${address.port}` }, 'gateway listening');

  onShutdownSignal((signal) => {
    logger.info({ signal }, 'shutting down: draining open connections');
    // Every request that was read is answered (see drain.ts); only a connection still open
    // after the longest legitimate request is cut.
    const force = setTimeout(() => {
      logger.warn('forcing open connections closed');
      server.closeAllConnections();
    }, drainDeadlineMs(config.PROXY_TIMEOUT_MS));
    force.unref();
    // The dashboard and the card fields drain too: a card submission in flight still needs the vault.
    const ownListenersClosed = Promise.all([admin.close(), fields.close()]);
    void metricsServer?.close();
    devKeyRegistration?.stop();
    drain.drain(() => {
      void ownListenersClosed.then(() => {
        vault.close();
        proxy.close();
        idempotencyRedis?.disconnect();
        // The answers went out; their request log entries follow before Redis is closed (flush never rejects).
        void (requestLogRecorder?.flush() ?? Promise.resolve())
          .then(() => keyStore.close())
          .finally(() => {
            logger.info('stopped');
            process.exit(0);
          });
      });
    });
  });
}

// Every launcher starts a service here, so this is where its heap policy is set (see heapGrowth.ts).
limitHeapGrowth();
main().catch((err: unknown) => {
  process.stderr.write(`[${SERVICE}] fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
