import fs from 'node:fs';
import path from 'node:path';
import { parseCidrList, type Logger } from '@tessera/common';
import { ownListener, readAttackState, type OwnListener } from '@tessera/edge';
import type { AdminConfig } from './config';
import { createOperator, setOperatorPassword } from './app/operators';
import { webhookDeliveriesOver } from './app/webhookDeliveriesPort';
import { normalizeEmail } from './domain/operators';
import { needsRehash, verifyPassword } from './domain/passwords';
import type { OperatorStore } from './store/adminStores';
import type { AdminStores } from './store/adminRedis';
import { createAdminApp, type AdminDeps } from './transport/adminRouter';
import type { AdminEventDeps } from './app/apiKeyEvents';

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

/** Built by `npm run build` (packages/js/scripts/build-browser.mjs), as the fields service serves it. */
export const BROWSER_MANIFEST = path.resolve(__dirname, '../../../packages/js/dist/browser/manifest.json');

/**
 * The SRI hash of the tessera.js this installation serves, for the recommended script line;
 * undefined (the policy says to build) when the browser scripts are not built here.
 */
export function readTesseraJsIntegrity(file: string = BROWSER_MANIFEST): string | undefined {
  try {
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, { integrity?: unknown }>;
    const integrity = manifest['tessera.js']?.integrity;
    return typeof integrity === 'string' ? integrity : undefined;
  } catch {
    return undefined;
  }
}

/** The admin API and the dashboard on ADMIN_BIND:ADMIN_PORT, over the stores in Redis. */
export async function setUpAdmin(params: {
  config: AdminConfig;
  logger: Logger;
  stores: AdminStores;
  pepper: string;
  /** Older API-key peppers (API_KEY_PEPPERS): second-factor secrets sealed under them still open. */
  previousPeppers: readonly string[];
  /** Where the key use cases record their events; absent: none. */
  events?: AdminEventDeps;
}): Promise<OwnListener> {
  const { config, logger, stores } = params;
  if (config.TESSERA_DEV_ADMIN_PASSWORD !== undefined) {
    await registerDevAdmin(stores.operators, config.TESSERA_DEV_ADMIN_EMAIL, config.TESSERA_DEV_ADMIN_PASSWORD, logger);
  }
  const deps: AdminDeps = {
    keyStore: stores.keyStore,
    operators: stores.operators,
    sessions: stores.sessions,
    throttle: stores.throttle,
    audit: stores.audit,
    detokenizations: stores.detokenizations,
    merchantSettings: stores.merchantSettings,
    routes: stores.routes,
    ...(stores.requestLog
      ? { requestLog: { store: stores.requestLog, maxAgeMs: config.REQUEST_LOG_MAX_AGE_SECONDS * 1000, now: () => new Date() } }
      : {}),
    pageInventory: { inventory: stores.pageInventory, authorizations: stores.scriptAuthorizations },
    webhookEndpoints: stores.webhookEndpoints,
    shredOrders: stores.shredOrders,
    cardExports: {
      orders: stores.exportOrders,
      recipients: stores.exportRecipients,
      files: stores.exportFiles,
      maxPerMerchantPerDay: config.EXPORT_MAX_PER_MERCHANT_PER_DAY,
    },
    cardImports: { imports: stores.cardImports, maxUploadBytes: config.IMPORT_UPLOAD_MAX_BYTES },
    webhookDeliveries: webhookDeliveriesOver(stores.webhookDeliveries, stores.events),
    pagePolicy: { fieldsOrigin: config.FIELDS_ORIGIN, tesseraJsIntegrity: readTesseraJsIntegrity() },
    // The card-testing limiter's own marks, read where the gateway's limiter writes them.
    attackState: (keyId) => readAttackState(stores.rateLimits, keyId),
    pepper: params.pepper,
    previousPeppers: params.previousPeppers,
    trustedProxies: parseCidrList(config.TRUSTED_PROXIES),
    logger,
    config,
    ...(params.events ? { events: params.events } : {}),
    // PCI DSS 8.4.2 in production; elsewhere optional unless ADMIN_MFA_REQUIRED=true.
    mfaRequired: config.ADMIN_MFA_REQUIRED ?? config.NODE_ENV === 'production',
  };
  const health = { ping: () => stores.keyStore.ping(), timeoutMs: config.REDIS_COMMAND_TIMEOUT_MS };
  return ownListener(() => createAdminApp(deps, health), config.ADMIN_PORT, config.ADMIN_BIND);
}
