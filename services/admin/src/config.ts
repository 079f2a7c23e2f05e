import path from 'node:path';
import { z } from 'zod';
import { checkRedisTlsEnv, env, metricsEnvShape, parseConfig } from '@tessera/common';
import { checkRedisUrlEnv, httpServiceRedisEnvShape, publicOrigin, trustedProxiesEnv } from '@tessera/edge';
import { apiKeyPepperEnvShape, checkApiKeyPepperEnv } from '@tessera/merchant-data';

/**
 * The admin service's settings: Redis, the API-key pepper (it hashes the keys it creates, as the
 * gateway looks them up), the dashboard's sessions and sign-in limits, and its listener. No vault
 * or proxy address and no TLS client certificate: it never calls either and never sees card data.
 */

/** `VAR=` in a compose file or shell means "not set" for an optional variable. */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

export const adminConfigSchema = z
  .object({
    // The dashboard and admin API, on an internal address unless the operator chooses otherwise.
    ADMIN_PORT: env.port(8081),
    ADMIN_BIND: z.string().min(1).default('127.0.0.1'),
    ...httpServiceRedisEnvShape,
    ...apiKeyPepperEnvShape,
    TRUSTED_PROXIES: trustedProxiesEnv,
    // Strict-Transport-Security on every response; only meaningful behind a TLS-terminating load
    // balancer, so off by default. 31536000 = one year.
    HSTS_MAX_AGE_SECONDS: env.nonNegativeInt(0),
    // PCI DSS 8.2.8: re-authenticate after 15 minutes idle; the absolute cap bounds a stolen cookie.
    ADMIN_SESSION_IDLE_SECONDS: env.positiveInt(900),
    ADMIN_SESSION_MAX_SECONDS: env.positiveInt(28_800),
    // Sign-in attempts per client address per window (password spraying), and the lockout of
    // PCI DSS 8.3.4: failures in a sliding window per account (at most 10) and per source for that
    // account (fewer, so one source cannot lock the account), then locked for LOCKOUT_SECONDS
    // (at least 30 minutes in production). See docs/SECURITY.md "Dashboard sign-in".
    ADMIN_LOGIN_WINDOW_SECONDS: env.positiveInt(3600),
    ADMIN_LOGIN_MAX_PER_IP: env.positiveInt(30),
    ADMIN_LOGIN_MAX_PER_ACCOUNT: z.coerce.number().int().positive().max(10, 'must be at most 10 (PCI DSS 8.3.4)').default(10),
    ADMIN_LOGIN_MAX_PER_SOURCE: env.positiveInt(5),
    ADMIN_LOGIN_LOCKOUT_SECONDS: env.positiveInt(1800),
    // PCI DSS 8.4.2: operators need a second factor (TOTP). Unset: required in production only.
    ADMIN_MFA_REQUIRED: unsetIfEmpty(
      z
        .enum(['true', 'false', '1', '0', 'yes', 'no'])
        .optional()
        .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),
    ),
    // A browser that signed in with the second factor stays trusted this long (it is exempt from
    // the account lockout, never from the password and the second factor).
    ADMIN_TRUSTED_DEVICE_DAYS: env.positiveInt(30),
    ADMIN_AUDIT_MAX_ENTRIES: env.positiveInt(10_000),
    // Card exports a merchant may have requested per UTC day (docs/migration.md#leaving-tessera-export).
    EXPORT_MAX_PER_MERCHANT_PER_DAY: env.positiveInt(5),
    // The largest card import file PUT /admin/v1/imports/{id}/file takes (Redis holds it whole,
    // encrypted, until the import ends: about 110 bytes per card). Default 512 MiB.
    IMPORT_UPLOAD_MAX_BYTES: env.positiveInt(512 * 1024 * 1024),
    EVENT_SWEEP_INTERVAL_SECONDS: env.positiveInt(3600),
    API_KEY_EXPIRING_SOON_DAYS: env.positiveInt(7),
    // The request log the gateway writes (docs/operations.md#request-log): 0 there means none is
    // kept, and the dashboard's request routes answer 404; nothing older than the age is shown.
    REQUEST_LOG_MAX_ENTRIES: env.nonNegativeInt(100_000),
    REQUEST_LOG_MAX_AGE_SECONDS: env.positiveInt(7 * 86_400),
    // The fields service's origin, named in the payment-page policy the dashboard and
    // `npm run keys -- page-policy` recommend (SAQ A kit). Unset: that policy is not offered.
    FIELDS_ORIGIN: unsetIfEmpty(publicOrigin.optional()),
    TESSERA_DEV_ADMIN_EMAIL: z.string().min(3).default('admin@tessera.local'),
    TESSERA_DEV_ADMIN_PASSWORD: unsetIfEmpty(z.string().min(12, 'must be at least 12 characters').max(256).optional()),
    // The admin service's own development state (a generated pepper, when none is configured: it
    // must be the gateway's, or the keys it creates would not authenticate there).
    TESSERA_STATE_DIR: z
      .string()
      .default('.tessera/admin')
      .transform((v) => path.resolve(v)),
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...metricsEnvShape,
  })
  .superRefine((cfg, ctx) => {
    checkRedisTlsEnv(cfg, ctx);
    checkRedisUrlEnv(
      cfg,
      ctx,
      'the admin service keeps operators, sessions and the audit trail in Redis, and reads API keys and the request log there',
    );
    checkApiKeyPepperEnv(cfg, ctx);
    if (cfg.NODE_ENV !== 'production') return;
    if (cfg.ADMIN_MFA_REQUIRED === false) {
      ctx.addIssue({ code: 'custom', path: ['ADMIN_MFA_REQUIRED'], message: 'must not be false in production (PCI DSS 8.4.2)' });
    }
    if (cfg.ADMIN_LOGIN_LOCKOUT_SECONDS < 1800) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_LOGIN_LOCKOUT_SECONDS'],
        message: 'must be at least 1800 in production (PCI DSS 8.3.4)',
      });
    }
    if (cfg.TESSERA_DEV_ADMIN_PASSWORD !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['TESSERA_DEV_ADMIN_PASSWORD'],
        message: 'must not be set in production (create operators with `npm run keys -- admin create`)',
      });
    }
  })
  // Runs only on a config the refinement accepted, which has a REDIS_URL.
  .transform((cfg) => ({ ...cfg, REDIS_URL: cfg.REDIS_URL as string }));

export type AdminConfig = z.infer<typeof adminConfigSchema>;

/** Throws ConfigError listing every bad variable; main and the CLI decide how to exit. */
export function parseAdminConfig(source: NodeJS.ProcessEnv): AdminConfig {
  return parseConfig(adminConfigSchema, source);
}
