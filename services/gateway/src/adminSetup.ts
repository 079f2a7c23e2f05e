import type { Redis } from 'ioredis';
import type { Router } from 'express';
import { parseCidrList, type Logger } from '@tessera/common';
import type { GatewayConfig } from './config';
import { createOperator, setOperatorPassword } from './app/operators';
import { normalizeEmail } from './domain/admin/operators';
import { needsRehash, verifyPassword } from './domain/admin/passwords';
import type { ApiKeyStore } from './store/apiKeyStore';
import type { DetokenizationLog } from './store/detokenizationLog';
import type { RequestLogDeps } from './app/requestLog';
import type { MerchantSettingsStore } from './store/merchantSettingsStore';
import type { AuditLog, LoginThrottle, OperatorStore, SessionStore } from './store/adminStores';
import { MemoryAuditLog, MemoryLoginThrottle, MemoryOperatorStore, MemorySessionStore } from './store/memoryAdminStores';
import { RedisAuditLog, RedisLoginThrottle, RedisOperatorStore, RedisSessionStore } from './store/redisAdminStores';
import { createAdminApp, createAdminRouter, type AdminDeps } from './transport/admin/adminRouter';
import type { AttackStateLookup } from './transport/admin/keyRoutes';
import { ownListener } from './transport/ownListener';

export interface AdminStores {
  operators: OperatorStore;
  sessions: SessionStore;
  throttle: LoginThrottle;
  audit: AuditLog;
}

/** Redis when the gateway has one (shared by every replica), memory otherwise (development only). */
export function createAdminStores(redis: Redis | undefined, config: Pick<GatewayConfig, 'ADMIN_AUDIT_MAX_ENTRIES'>): AdminStores {
  if (redis) {
    return {
      operators: new RedisOperatorStore(redis),
      sessions: new RedisSessionStore(redis),
      throttle: new RedisLoginThrottle(redis),
      audit: new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES),
    };
  }
  return {
    operators: new MemoryOperatorStore(),
    sessions: new MemorySessionStore(),
    throttle: new MemoryLoginThrottle(),
    audit: new MemoryAuditLog(config.ADMIN_AUDIT_MAX_ENTRIES),
  };
}

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
  close(): Promise<void>;
}

export async function setUpAdmin(params: {
  config: GatewayConfig;
  logger: Logger;
  keyStore: ApiKeyStore;
  pepper: string;
  /** Older API-key peppers (API_KEY_PEPPERS): second-factor secrets sealed under them still open. */
  previousPeppers?: readonly string[];
  redis: Redis | undefined;
  detokenizations?: DetokenizationLog;
  merchantSettings?: MerchantSettingsStore;
  requestLog?: RequestLogDeps;
  /** The card-testing limiter: the key list says which keys are under attack. */
  cardTesting?: { attackState: AttackStateLookup };
}): Promise<AdminSetup> {
  const { config, logger, cardTesting } = params;
  const stores = createAdminStores(params.redis, config);
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
    return { router: createAdminRouter(deps), listen: async () => undefined, close: async () => undefined };
  }
  const listener = ownListener(() => createAdminApp(deps), config.ADMIN_PORT, config.ADMIN_BIND);
  return {
    router: undefined,
    async listen() {
      logger.info({ url: `${await listener.listen()}/dashboard/` }, 'admin listening');
    },
    close: listener.close,
  };
}
