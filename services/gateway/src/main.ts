import cluster from 'node:cluster';
import { runService } from '@tessera/common';
import { registerDevKey } from './devKey';
import { superviseWorkers } from './cluster';
import { gatewayConfigSchema, resolveApiKeyPepper } from './config';
import type { FormSessionDeps } from './app/formSessions';
import { openRequestLog } from './app/requestLog';
import { connectGatewayStores } from './store/gatewayRedis';
import { requestLogRetention } from './store/gatewayStores';
import { drainDeadlineMs } from '@tessera/edge';
import { connectUpstreams } from './transport/upstreams';
import { setUpApi } from './apiSetup';
import { setUpForwardProxy } from './forwardProxySetup';
import { startWebhookDelivery } from './webhookDeliverySetup';

void runService({
  name: 'gateway',
  configSchema: gatewayConfigSchema,
  // Workers (GATEWAY_WORKERS > 1) share one output stream: each line says which worker wrote it.
  ...(cluster.isWorker ? { logBindings: { worker: cluster.worker?.id } } : {}),
  async start({ config, logger, metrics }) {
    const { pepper, previousPeppers } = resolveApiKeyPepper(config, logger);
    // After the pepper: a development pepper file is created once, here, before workers read it.
    if (config.GATEWAY_WORKERS > 1 && cluster.isPrimary) {
      // Each worker drains for up to drainDeadlineMs; the primary waits a little longer before it kills them.
      superviseWorkers({ workers: config.GATEWAY_WORKERS, stopGraceMs: drainDeadlineMs(config.PROXY_TIMEOUT_MS) + 4_000 }, logger);
      return undefined;
    }
    const { stores, redis, layoutReady, clients: redisClients } = await connectGatewayStores(config, logger);
    const { keyStore } = stores;
    // Awaited (its first attempt) so the key works as soon as 'gateway listening' is logged; it
    // retries with backoff until Redis takes the write.
    const devKey =
      config.TESSERA_DEV_API_KEY === undefined
        ? undefined
        : registerDevKey({ keyStore, apiKey: config.TESSERA_DEV_API_KEY, pepper, logger });
    await devKey?.firstAttempt;
    // Attached after the first attempt so start-up registers once. Registering again on every
    // reconnect (it is idempotent) covers a Redis that came back empty.
    redis.on('ready', () => {
      logger.info('redis connected');
      devKey?.again();
    });
    const upstreams = connectUpstreams(config, logger);
    const requestLog = openRequestLog(
      stores.requestLog,
      { ...requestLogRetention(config), maxBuffered: config.REQUEST_LOG_BUFFER_ENTRIES },
      logger,
      metrics,
    );
    const peppers = { pepper, previousPeppers };
    // The hosted payment page: sessions opened here, used on the fields service (FIELDS_ORIGIN).
    const formSessions: FormSessionDeps | undefined =
      config.FIELDS_ORIGIN === undefined
        ? undefined
        : {
            sessions: stores.formSessions,
            merchantSettings: stores.merchantSettings,
            fieldsOrigin: config.FIELDS_ORIGIN,
            ttlSeconds: config.FORM_SESSION_TTL_SECONDS,
            now: () => new Date(),
          };
    const api = setUpApi({
      config,
      logger,
      metrics,
      stores,
      upstreams,
      ...peppers,
      ...(formSessions ? { formSessions } : {}),
      ...(requestLog ? { requestLog } : {}),
      // Until the quick-start key is registered, requests with it fail: not ready.
      readyChecks: { redisLayout: layoutReady, ...(devKey ? { devApiKey: () => devKey.registered } : {}) },
    });
    const url = await api.listen();
    const forwardProxy = setUpForwardProxy({
      config,
      logger,
      metrics,
      stores,
      upstreams,
      ...peppers,
      ...(requestLog ? { requestLog } : {}),
    });
    const forwardProxyUrl = await forwardProxy?.listen();
    if (forwardProxyUrl !== undefined) logger.info({ url: forwardProxyUrl }, 'forward proxy listening');
    const webhookDispatcher = startWebhookDelivery({ config, logger, metrics, redis, sender: upstreams.webhooks, pepper });
    return {
      listeners: [api.listener, ...(forwardProxy ? [forwardProxy.listener] : [])],
      // The answers went out; their request log entries follow before Redis is closed (flush never rejects).
      clients: [
        // Its attempts in flight end (each within WEBHOOK_TIMEOUT_MS) before the proxy channel closes.
        { name: 'webhook delivery', close: () => webhookDispatcher?.stop() },
        { name: 'dev key registration', close: () => devKey?.stop() },
        { name: 'vault', close: () => upstreams.vault.close() },
        { name: 'proxy', close: () => upstreams.proxy.close() },
        { name: 'request log', close: () => requestLog?.flush() },
        ...redisClients,
      ],
      listening: { url },
      // Only a connection still open after the longest legitimate request is cut.
      drainGraceMs: drainDeadlineMs(config.PROXY_TIMEOUT_MS),
    };
  },
});
