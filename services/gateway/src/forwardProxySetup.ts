import tls from 'node:tls';
import type { Registry } from 'prom-client';
import type { Logger } from '@tessera/common';
import { RateLimiter, secretKeyAuthenticator } from '@tessera/edge';
import type { GatewayConfig } from './config';
import { HostCertificates } from './app/hostCertificates';
import type { ForwardProxyVault, ProxyApi } from './app/ports';
import type { RequestLogRecorder } from './app/requestLog';
import type { GatewayStores } from './store/gatewayStores';
import { createForwardProxyServer, type ForwardProxyServer } from './transport/forwardProxy';

/**
 * The forward proxy on FORWARD_PROXY_PORT (docs/proxies.md), authenticated as /v1 is: the same
 * key store and peppers, rate limits and request log; undefined when the port is not set.
 */
export function setUpForwardProxy(params: {
  config: GatewayConfig;
  logger: Logger;
  metrics: Registry;
  stores: GatewayStores;
  upstreams: { proxy: ProxyApi; forwardProxyVault: ForwardProxyVault };
  pepper: string;
  previousPeppers: readonly string[];
  requestLog?: RequestLogRecorder;
}): ForwardProxyServer | undefined {
  const { config, stores, logger } = params;
  if (config.FORWARD_PROXY_PORT === undefined) return undefined;
  const port = config.FORWARD_PROXY_PORT;
  const authenticate = secretKeyAuthenticator({
    keyStore: stores.keyStore,
    pepper: params.pepper,
    previousPeppers: params.previousPeppers,
    logger,
    now: () => new Date(),
    rateLimiter: new RateLimiter(stores.rateLimits, config, logger),
    keyLookupWithPeek: stores.keyStore,
  });
  return createForwardProxyServer({
    config: { ...config, FORWARD_PROXY_PORT: port },
    logger,
    authenticate,
    useCases: { routes: stores.routes, proxy: params.upstreams.proxy, logger, detokenizations: stores.detokenizations },
    certificates: new HostCertificates(params.upstreams.forwardProxyVault, {
      prepare: ({ keyPem, chainPem }) => tls.createSecureContext({ key: keyPem, cert: chainPem, minVersion: 'TLSv1.2' }),
    }),
    requestLog: params.requestLog,
    metrics: params.metrics,
  });
}
