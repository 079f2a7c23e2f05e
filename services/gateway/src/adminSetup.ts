import type { Router } from 'express';
import { parseCidrList, type Listener, type Logger } from '@tessera/common';
import type { GatewayConfig } from './config';
import { createOperator, setOperatorPassword } from './app/operators';
import { normalizeEmail } from './domain/admin/operators';
import { needsRehash, verifyPassword } from './domain/admin/passwords';
import type { ApiKeyAdmin, ApiKeyLookup, DetokenizationLog, MerchantSettingsStore } from '@tessera/merchant-data';
import type { RequestLogDeps } from './app/requestLog';
import type { OperatorStore } from './store/adminStores';
import type { AdminStores } from './store/gatewayStores';
import { createAdminApp, createAdminRouter, type AdminDeps } from './transport/admin/adminRouter';
import type { AttackStateLookup } from './transport/admin/keyRoutes';
import { NO_OWN_LISTENER, ownListener } from '@tessera/edge';

/**
 * Outside production, TESSERA_DEV_ADMIN_PASSWORD makes a platform operator (all merchants) so a
 * new user of `npm start` can log in; a later start with another password replaces it.
 */
export async function registerDevAdmin(operators: OperatorStore, email: string, password: string, logger: Logger): Promise<void> {
  try {
    const normalized = normalizeEmail(email);
    const existing = await operators.findByEmail(normalized);
    // The same password again keeps the operator's sessions; another one ends them.
    if (existing && (await verifyPassword(password, existing.passwordHash)) && !needsRehash(existing.passwordHash)) return;
    // The operator use cases the CLI calls; a changed password ends the operator's sessions.
    if (existing) await setOperatorPassword({ operators }, normalized, password);
    else await createOperator({ operators, now: () => new Date() }, { email: normalized, password, merchantId: null });
    logger.warn({ email: normalized }, 'registered the development dashboard operator from TESSERA_DEV_ADMIN_PASSWORD (development only)');
  } catch (err) {
    logger.error({ err }, 'could not register the development dashboard operator');
  }
}

export interface AdminSetup {
  /** Mount on the public app; undefined when ADMIN_PORT serves the dashboard on its own listener. */
  router: Router | undefined;
  /** Starts the separate listener when ADMIN_PORT is set. */
  listen(): Promise<void>;
  /** Drained and cut with the API's port by runService. */
  listener: Listener;
}

export async function setUpAdmin(params: {
  config: GatewayConfig;
  logger: Logger;
  keyStore: ApiKeyAdmin & ApiKeyLookup;
  pepper: string;
  /** Older API-key peppers (API_KEY_PEPPERS): second-factor secrets sealed under them still open. */
  previousPeppers?: readonly string[];
  stores: AdminStores;
  detokenizations?: DetokenizationLog;
  merchantSettings?: MerchantSettingsStore;
  requestLog?: RequestLogDeps;
  /** The card-testing limiter: the key list says which keys are under attack. */
  cardTesting?: { attackState: AttackStateLookup };
}): Promise<AdminSetup> {
  const { config, logger, cardTesting, stores } = params;
  if (config.TESSERA_DEV_ADMIN_PASSWORD !== undefined) {
    await registerDevAdmin(stores.operators, config.TESSERA_DEV_ADMIN_EMAIL, config.TESSERA_DEV_ADMIN_PASSWORD, logger);
  }
  const deps: AdminDeps = {
    ...stores,
    keyStore: params.keyStore,
    ...(params.detokenizations ? { detokenizations: params.detokenizations } : {}),
    ...(params.merchantSettings ? { merchantSettings: params.merchantSettings } : {}),
    ...(params.requestLog ? { requestLog: params.requestLog } : {}),
    ...(cardTesting ? { attackState: (keyId: string) => cardTesting.attackState(keyId) } : {}),
    pepper: params.pepper,
    previousPeppers: params.previousPeppers ?? [],
    trustedProxies: parseCidrList(config.TRUSTED_PROXIES),
    logger,
    config,
    // PCI DSS 8.4.2 in production; elsewhere optional unless ADMIN_MFA_REQUIRED=true.
    mfaRequired: config.ADMIN_MFA_REQUIRED ?? config.NODE_ENV === 'production',
  };
  if (config.ADMIN_PORT === undefined) {
    return { router: createAdminRouter(deps), listen: async () => undefined, listener: NO_OWN_LISTENER };
  }
  const listener = ownListener(() => createAdminApp(deps), config.ADMIN_PORT, config.ADMIN_BIND);
  return {
    router: undefined,
    async listen() {
      logger.info({ url: `${await listener.listen()}/dashboard/` }, 'admin listening');
    },
    listener,
  };
}
