import { Counter } from 'prom-client';
import {
  grpcClientTuning,
  loadOrCreateDevSecret,
  parseCidrList,
  runService,
  tlsFilesOf,
  withDeadline,
  TesseraError,
} from '@tessera/common';
import { connectProxyClient, connectVaultClient, readTlsMaterial } from '@tessera/protos';
import { drainDeadlineMs, ownListener } from '@tessera/edge';
import crypto from 'node:crypto';
import { inboundConfigSchema } from './config';
import { cardTestingGuard } from './app/cardTesting';
import { connectInboundStores } from './store/inboundStores';
import { createInboundApp } from './transport/inboundApp';
import { upstreamOver } from './transport/upstreamPort';
import { inboundVaultOver } from './transport/vaultPort';

/**
 * The inbound routes service (ADR 0013, docs/proxies.md): merchants' inbound routes on
 * INBOUND_PORT. It takes raw card data from anyone on the internet, as the fields do, so it runs
 * alone with the least: Tokenize at the vault, ForwardUpstream at the proxy (its only way out: it has
 * no internet egress), routes read-only and its own counters in Redis.
 */
void runService({
  name: 'inbound',
  configSchema: inboundConfigSchema,
  async start({ config, logger, metrics }) {
    const secret =
      config.INBOUND_CARD_FINGERPRINT_KEY ??
      loadOrCreateDevSecret(config.TESSERA_STATE_DIR, 'card-fingerprint-key', () => crypto.randomBytes(32).toString('base64url')).value;
    const { stores, close: closeRedis } = await connectInboundStores(config, logger);
    const tlsFiles = tlsFilesOf(config);
    const tls = tlsFiles === undefined ? undefined : readTlsMaterial(tlsFiles);
    if (tls === undefined)
      logger.warn('TLS is not configured: calls to the vault and the proxy are PLAINTEXT. Development on loopback only.');
    const tuning = grpcClientTuning(config);
    const vault = inboundVaultOver(
      connectVaultClient({ address: config.VAULT_ADDR, tls, peerName: config.TLS_PEER_VAULT, tuning }),
      config.VAULT_TIMEOUT_MS,
    );
    const upstream = upstreamOver(
      connectProxyClient({ address: config.PROXY_ADDR, tls, peerName: config.TLS_PEER_PROXY, tuning }),
      config.INBOUND_UPSTREAM_TIMEOUT_MS,
    );
    const refused = new Counter({
      name: 'tessera_inbound_cards_refused_total',
      help: 'Inbound requests with a card answered 429 by the card-testing limits, by limit (route, ip, distinct_cards)',
      labelNames: ['reason'],
      registers: [metrics],
    });
    for (const reason of ['route', 'ip', 'distinct_cards']) refused.inc({ reason }, 0);
    const cardTesting = cardTestingGuard({
      counter: stores.rateLimits,
      cards: stores.distinctCards,
      limits: config,
      secret,
      logger,
      onRefused: (reason) => refused.inc({ reason }),
    });
    const timeoutMs = config.READY_TIMEOUT_MS;
    const unavailable = (): TesseraError => new TesseraError('service_unavailable');
    const app = createInboundApp({
      inbound: { routes: stores.routes, vault, upstream, cardTesting, now: () => new Date() },
      logger,
      metrics,
      maxBodyBytes: config.INBOUND_MAX_BODY_BYTES,
      trustedProxies: parseCidrList(config.TRUSTED_PROXIES),
      readyChecks: {
        redis: async () => (await withDeadline(stores.ping(), timeoutMs, unavailable), true),
        vault: async () => (await withDeadline(vault.ready({ requestId: 'readyz', timeoutMs }), timeoutMs, unavailable)).ready,
        proxy: async () => (await withDeadline(upstream.ready({ requestId: 'readyz', timeoutMs }), timeoutMs, unavailable)).ready,
      },
    });
    const listener = ownListener(() => app, config.INBOUND_PORT, config.INBOUND_BIND);
    const url = await listener.listen();
    return {
      listeners: [listener],
      clients: [
        { name: 'vault', close: () => vault.close() },
        { name: 'proxy', close: () => upstream.close() },
        { name: 'redis', close: closeRedis },
      ],
      listening: { url },
      // A request in flight may wait for the vault and then for the upstream.
      drainGraceMs: drainDeadlineMs(config.VAULT_TIMEOUT_MS + config.INBOUND_UPSTREAM_TIMEOUT_MS),
    };
  },
});
