import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Listener, Logger } from '@tessera/common';
import type { GatewayConfig } from './config';
import type { FormSessionDeps } from './app/formSessions';
import type { RequestLogRecorder } from './app/requestLog';
import type { GatewayStores } from './store/gatewayStores';
import { createApp } from './transport/app';
import { drainingListener, installDrain } from '@tessera/edge';
import { RateLimiter } from '@tessera/edge';
import type { ForwardProxyVault, ProxyApi, VaultApi } from './app/ports';

export interface ApiSetup {
  /** Starts listening on HOST:PORT; resolves with the base URL actually bound. */
  listen(): Promise<string>;
  /** Drained by runService: every request that was read is answered (drain.ts). */
  listener: Listener;
}

/** The merchants' API (/v1) on the gateway's port. */
export function setUpApi(params: {
  config: GatewayConfig;
  logger: Logger;
  metrics: Registry;
  stores: GatewayStores;
  upstreams: { vault: VaultApi; proxy: ProxyApi; forwardProxyVault?: ForwardProxyVault };
  pepper: string;
  previousPeppers: readonly string[];
  formSessions?: FormSessionDeps;
  requestLog?: RequestLogRecorder;
  readyChecks: Record<string, () => boolean>;
}): ApiSetup {
  const { config, stores } = params;
  const app = createApp({
    config,
    logger: params.logger,
    keyStore: stores.keyStore,
    pepper: params.pepper,
    previousPeppers: params.previousPeppers,
    ...params.upstreams,
    // Counters live where the keys live, shared by every replica and worker; the key lookup reads
    // and counts them (and the merchant settings) in one command.
    rateLimiter: new RateLimiter(stores.rateLimits, config, params.logger),
    keyLookupWithPeek: stores.keyStore,
    // Claims outlive the longest request (a whole proxy call) so a duplicate never runs beside it;
    // a claim left by a gateway that died mid-request is then answered as outcome unknown for
    // /v1/proxy, and run again for /v1/token (see transport/idempotency.ts).
    idempotency: {
      store: stores.idempotency,
      ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000,
      lockTtlMs: config.PROXY_TIMEOUT_MS + 10_000,
      maxStoredBytes: config.IDEMPOTENCY_MAX_STORED_BYTES,
      maxBytesPerMerchant: config.IDEMPOTENCY_MAX_BYTES_PER_MERCHANT,
    },
    metrics: params.metrics,
    detokenizations: stores.detokenizations,
    ...(params.requestLog ? { requestLog: params.requestLog } : {}),
    merchantSettings: stores.merchantSettings,
    readyChecks: params.readyChecks,
    events: stores.events,
    webhookEndpoints: stores.webhookEndpoints,
    // Form and CVC sessions are used on the fields service, whose origin they need (FIELDS_ORIGIN).
    ...(params.formSessions
      ? {
          formSessions: params.formSessions,
          cvcSessions: { sessions: stores.cvcSessions, ttlSeconds: config.CVC_SESSION_TTL_SECONDS, now: () => new Date() },
        }
      : {}),
  });
  const server = http.createServer(app);
  const drain = installDrain(server);
  // A PSP call may legitimately take PROXY_TIMEOUT_MS; Node's defaults must not cut it short.
  server.requestTimeout = config.PROXY_TIMEOUT_MS + 30_000;
  return {
    listener: drainingListener(server, drain),
    async listen() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.PORT, config.HOST, () => resolve());
      });
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${host}:${address.port}`;
    },
  };
}
