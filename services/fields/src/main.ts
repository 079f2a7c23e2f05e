import { eventFailureCounter, grpcClientTuning, parseCidrList, runService, tlsFilesOf, withDeadline, TesseraError } from '@tessera/common';
import { completionCalls, connectProxyClient, connectVaultClient, readTlsMaterial, vaultCalls } from '@tessera/protos';
import { cardTestingLimiter, drainDeadlineMs, ownListener, RateLimiter } from '@tessera/edge';
import { resolveApiKeyPepper, scheduleSweep } from '@tessera/merchant-data';
import { fieldsConfigSchema, fieldsOriginOf } from './config';
import { requestPepperMoves } from './app/pepperMoves';
import { cardTestingReporter } from './app/cardTestingEvents';
import { sweepFormSessions } from './app/formSessionEvents';
import { connectFieldsStores } from './store/fieldsStores';
import { frameKeyLookup } from './transport/browserRoutes';
import { loadCardFieldsAssets } from './transport/cardFieldsPage';
import { createFieldsApp } from './transport/fieldsApp';
import { fieldsVaultOver } from './transport/vaultPort';

/**
 * The fields service: the hosted card fields, tessera.js, the CVC field, the hosted payment page
 * and the browser routes, on an origin of their own (FIELDS_ORIGIN). A separate origin is what
 * keeps card data out of the merchant's page; a separate process with its own vault identity is
 * what keeps a compromise of this most exposed surface to provisional tokens and granted CVCs.
 */
void runService({
  name: 'fields',
  configSchema: fieldsConfigSchema,
  async start({ config, logger, metrics }) {
    const { pepper, previousPeppers } = resolveApiKeyPepper(config, logger);
    // Read before anything connects: without the built scripts there are no fields to serve.
    const assets = loadCardFieldsAssets();
    const { stores, close: closeRedis } = await connectFieldsStores(config, logger);
    const tlsFiles = tlsFilesOf(config);
    const tls = tlsFiles === undefined ? undefined : readTlsMaterial(tlsFiles);
    if (tls === undefined) logger.warn('TLS is not configured: calls to the vault are PLAINTEXT. Development on loopback only.');
    const vault = fieldsVaultOver(
      vaultCalls(
        connectVaultClient({ address: config.VAULT_ADDR, tls, peerName: config.TLS_PEER_VAULT, tuning: grpcClientTuning(config) }),
        config.VAULT_TIMEOUT_MS,
      ),
    );
    // Only hosted pages whose merchant charges through a completion URL need the proxy; without
    // PROXY_ADDR such a page says payments are unavailable (docs/browser.md).
    const completions =
      config.PROXY_ADDR === undefined
        ? undefined
        : completionCalls(
            connectProxyClient({ address: config.PROXY_ADDR, tls, peerName: config.TLS_PEER_PROXY, tuning: grpcClientTuning(config) }),
          );
    if (completions === undefined) logger.warn('PROXY_ADDR is not set: hosted pages with a completionUrl cannot take payments.');
    const now = () => new Date();
    const events = { recorder: stores.events, logger, onFailure: eventFailureCounter(metrics) };
    const reportAttack = cardTestingReporter({
      ...events,
      keys: stores.keyStore,
      windowSeconds: config.BROWSER_ATTACK_COOLDOWN_SECONDS,
      now,
    });
    const cardTesting = cardTestingLimiter({
      config,
      stores,
      pepper,
      logger,
      metrics,
      onAttackMarked: (keyId, attempts) => void reportAttack(keyId, attempts),
    });
    // Until the listener is bound (FIELDS_PORT 0 in tests) the origin is not known; the app reads it per request.
    let fieldsOrigin = config.FIELDS_ORIGIN ?? '';
    // Its Redis user may not write the digest index: the admin service moves keys to the newest pepper.
    const moveToCurrentPepper = requestPepperMoves(stores.pepperMoves, now);
    const timeoutMs = config.READY_TIMEOUT_MS;
    const unavailable = (): TesseraError => new TesseraError('service_unavailable');
    const keyLookup = { keyStore: stores.keyStore, pepper, previousPeppers, moveToCurrentPepper, now };
    const trustedProxies = parseCidrList(config.TRUSTED_PROXIES);
    const app = createFieldsApp({
      assets,
      logger,
      metrics,
      hstsMaxAgeSeconds: config.HSTS_MAX_AGE_SECONDS,
      trustedProxies,
      lookupKey: frameKeyLookup({ ...keyLookup, logger }),
      cardTesting,
      provisionalTtlUnderAttackSeconds: config.BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS,
      formSessions: {
        sessions: stores.formSessions,
        vault,
        pepper,
        get fieldsOrigin() {
          return fieldsOrigin;
        },
        now,
        logger,
        completionTimeoutMs: config.COMPLETION_TIMEOUT_MS,
        events,
        ...(completions ? { completions } : {}),
      },
      // The SAQ A kit: what tessera.js reports from merchants' payment pages, and their CSP violations.
      pageReports: {
        inventory: stores.pageInventory,
        now,
        logger,
        trustedProxies,
        auth: {
          ...keyLookup,
          rateLimiter: new RateLimiter(
            stores.rateLimits,
            {
              RATE_LIMIT_PER_KEY_PER_SECOND: config.PAGE_REPORTS_PER_KEY_PER_SECOND,
              RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: config.RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE,
              RATE_LIMIT_STORE_TIMEOUT_MS: config.RATE_LIMIT_STORE_TIMEOUT_MS,
            },
            logger,
          ),
        },
      },
      browser: {
        auth: {
          keyStore: stores.keyStore,
          pepper,
          previousPeppers,
          moveToCurrentPepper,
          get fieldsOrigin() {
            return fieldsOrigin;
          },
          now,
          // The failed-authentication limit only: a public key gets no per-key request limit.
          rateLimiter: new RateLimiter(
            stores.rateLimits,
            {
              RATE_LIMIT_PER_KEY_PER_SECOND: 0,
              RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: config.RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE,
              RATE_LIMIT_STORE_TIMEOUT_MS: config.RATE_LIMIT_STORE_TIMEOUT_MS,
            },
            logger,
          ),
        },
        vault,
      },
      readyChecks: {
        redis: async () => (await withDeadline(stores.keyStore.ping(), timeoutMs, unavailable), true),
        vault: async () => (await withDeadline(vault.ready({ requestId: 'readyz', timeoutMs }), timeoutMs, unavailable)).ready,
      },
    });
    // The form sessions' events sweep (form_session.expired, completed's backstop): once across replicas per interval.
    const sweep = scheduleSweep({
      name: 'form-sessions',
      intervalMs: config.EVENT_SWEEP_INTERVAL_SECONDS * 1000,
      lease: stores.sweepLease,
      sweep: async () => void (await sweepFormSessions({ ...events, sessions: stores.formSessions, now })),
      logger,
    });
    const listener = ownListener(() => app, config.FIELDS_PORT, config.FIELDS_BIND);
    const url = await listener.listen();
    fieldsOrigin = fieldsOriginOf(config, Number(new URL(url).port));
    return {
      // A card submission in flight still needs the vault and Redis: they close after the drain.
      listeners: [listener],
      clients: [
        { name: 'event sweep', close: () => sweep.stop() },
        { name: 'vault', close: () => vault.close() },
        ...(completions ? [{ name: 'proxy', close: () => completions.close() }] : []),
        { name: 'redis', close: closeRedis },
      ],
      listening: { url, fieldsOrigin },
      // A submission may wait for the vault and then for the merchant's completion endpoint.
      drainGraceMs: drainDeadlineMs(config.VAULT_TIMEOUT_MS + (completions ? config.COMPLETION_TIMEOUT_MS : 0)),
    };
  },
});
