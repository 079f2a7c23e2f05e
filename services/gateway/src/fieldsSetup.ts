import { parseCidrList, type Listener, type Logger } from '@tessera/common';
import { browserOriginsOf, type BrowserOrigins, type GatewayConfig } from './config';
import type { FormSessionDeps } from './app/formSessions';
import type { ApiKeyLookup } from '@tessera/merchant-data';
import type { BrowserTokenLimiter } from '@tessera/edge';
import { frameKeyLookup } from './transport/browserTokens';
import { loadCardFieldsAssets } from './transport/fields/cardFieldsPage';
import { createFieldsApp } from './transport/fields/fieldsApp';
import { NO_OWN_LISTENER, ownListener } from '@tessera/edge';

export interface FieldsSetup {
  /** The public origins, when the browser integration is on (FIELDS_PORT or FIELDS_ORIGIN set). */
  origins: BrowserOrigins | undefined;
  /** Starts the fields listener when FIELDS_PORT is set. */
  listen(): Promise<void>;
  /** Drained and cut with the API's port by runService. */
  listener: Listener;
}

/**
 * The hosted card fields get a listener of their own (FIELDS_BIND:FIELDS_PORT), like the dashboard
 * with ADMIN_PORT: a separate origin is what keeps card data out of the merchant's page and the
 * API's origin free of any page. Without FIELDS_PORT this gateway serves no fields (another
 * replica or an ingress may, at FIELDS_ORIGIN) but still answers the browser route.
 */
export function setUpFields(params: {
  config: GatewayConfig;
  logger: Logger;
  keyStore: ApiKeyLookup;
  pepper: string;
  /** Older API-key peppers, newest first: publishable keys made under them still frame the fields. */
  previousPeppers?: readonly string[];
  /** The hosted payment page's sessions (main builds them with the origins from browserOriginsOf). */
  formSessions?: FormSessionDeps;
  /** The browser route's card-testing limiter, which the hosted page's card submission shares. */
  cardTesting?: BrowserTokenLimiter;
}): FieldsSetup {
  const { config, logger } = params;
  const origins = browserOriginsOf(config);
  const port = config.FIELDS_PORT;
  if (origins === undefined || port === undefined) return { origins, listen: async () => undefined, listener: NO_OWN_LISTENER };
  const app = createFieldsApp({
    assets: loadCardFieldsAssets(),
    apiOrigin: origins.api,
    lookupKey: frameKeyLookup({
      keyStore: params.keyStore,
      pepper: params.pepper,
      previousPeppers: params.previousPeppers ?? [],
      logger,
      now: () => new Date(),
    }),
    logger,
    hstsMaxAgeSeconds: config.HSTS_MAX_AGE_SECONDS,
    ...(params.formSessions ? { formSessions: params.formSessions } : {}),
    ...(params.cardTesting ? { cardTesting: params.cardTesting } : {}),
    provisionalTtlUnderAttackSeconds: config.BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS,
    trustedProxies: parseCidrList(config.TRUSTED_PROXIES),
  });
  const listener = ownListener(() => app, port, config.FIELDS_BIND);
  return {
    origins,
    async listen() {
      const url = await listener.listen();
      logger.info({ url, fieldsOrigin: origins.fields, apiOrigin: origins.api }, 'fields listening');
    },
    listener,
  };
}
