import path from 'node:path';
import { z } from 'zod';
import {
  checkRedisTlsEnv,
  checkTlsEnv,
  env,
  grpcClientEnvShape,
  grpcTarget,
  grpcTargetProblem,
  metricsEnvShape,
  parseConfig,
  tlsEnvShape,
} from '@tessera/common';
import { apiKeyPepperEnvShape, checkApiKeyPepperEnv } from '@tessera/merchant-data';
import { checkRedisUrlEnv, httpServiceRedisEnvShape, publicOrigin, trustedProxiesEnv, unsetIfEmpty } from '@tessera/edge';

/**
 * The fields service (docs/browser.md): the card-fields iframe, tessera.js, the CVC field, the
 * hosted payment page and the browser routes, on an origin of their own. It needs Redis (publishable
 * keys, form sessions, the card-testing windows) and the vault, under its own mTLS identity; and,
 * for hosted pages with a completion URL, the proxy (the only service that reaches the internet),
 * which lets this identity make that one call.
 */
export const fieldsConfigSchema = z
  .object({
    FIELDS_PORT: env.port(8082),
    FIELDS_BIND: z.string().min(1).default('127.0.0.1'),
    // The public origin browsers reach this service at (its own host in production, never the API's
    // or the dashboard's): the only origin the browser routes take a card from. Outside production it
    // defaults to http://127.0.0.1:FIELDS_PORT.
    FIELDS_ORIGIN: unsetIfEmpty(publicOrigin.optional()),
    VAULT_ADDR: grpcTarget('127.0.0.1:50051'),
    VAULT_TIMEOUT_MS: env.positiveInt(2000),
    // The proxy, which calls merchants' completion endpoints for the hosted payment page. Unset: a
    // session with a completionUrl shows "payments are unavailable" and takes no card.
    PROXY_ADDR: unsetIfEmpty(
      z
        .string()
        .superRefine((value, ctx) => {
          const problem = grpcTargetProblem(value);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
    ),
    // How long a merchant's completion endpoint has to answer; past it the payment's outcome is
    // unknown and the session takes no further card (never a second charge).
    COMPLETION_TIMEOUT_MS: env.positiveInt(10_000),
    EVENT_SWEEP_INTERVAL_SECONDS: env.positiveInt(60),
    READY_TIMEOUT_MS: env.positiveInt(1000),
    // REDIS_URL (required below), REDIS_CLUSTER_NODES, REDIS_TLS_CA_FILE, REDIS_COMMAND_TIMEOUT_MS.
    ...httpServiceRedisEnvShape,
    ...apiKeyPepperEnvShape,
    TRUSTED_PROXIES: trustedProxiesEnv,
    // Per client IP (an IPv6 /64): failed publishable-key authentications per minute before further
    // attempts get 429, so keys cannot be sprayed online. 0 disables.
    RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: env.nonNegativeInt(30),
    // How long a request waits for a rate-limit or card-testing counter before going through as if
    // under its limit (they fail open).
    RATE_LIMIT_STORE_TIMEOUT_MS: env.positiveInt(100),
    // The SAQ A kit's page reports and CSP violation reports (docs/browser.md): per publishable key
    // per second, both routes together; past it 429 and the report is dropped (the next page load
    // reports the same scripts). 0 disables the limit.
    PAGE_REPORTS_PER_KEY_PER_SECOND: env.nonNegativeInt(50),
    // Card-testing defence on browser tokenization (docs/browser.md); 0 disables each. A shopper
    // tokenizes once or twice per checkout (a typo, a second card); a publishable key's threshold is
    // the whole site's checkouts per minute, past which every card costs the browser a proof of
    // work (never a refusal: that would let anyone lock the merchant's shoppers out).
    BROWSER_TOKENS_PER_KEY_PER_MINUTE: env.nonNegativeInt(600),
    // The proof of work's maxnumber (expected SHA-256 hashes: half of it) at the threshold, and its
    // ceiling. A browser's Web Crypto does about 50 hashes/ms (measured in headless Chromium on a
    // busy 2-core host), so about 0.1 s at the base and 5 s at the ceiling; a card tester's native
    // code some 5 times faster per core. It grows with the key's volume and doubles per refusal of
    // the asking address in the hour.
    BROWSER_CHALLENGE_BASE_NUMBER: env.positiveInt(10_000),
    BROWSER_CHALLENGE_MAX_NUMBER: env.positiveInt(500_000),
    // A challenge is solved and spent within this, so work cannot be stockpiled at quiet times.
    BROWSER_CHALLENGE_TTL_SECONDS: env.positiveInt(120),
    // Once a key reaches its threshold it stays under attack (challenges on, dashboard banner) this long.
    BROWSER_ATTACK_COOLDOWN_SECONDS: env.positiveInt(300),
    // A token made while its key is under attack lives this long unless retained (instead of the
    // vault's BROWSER_TOKEN_TTL_SECONDS, when that is longer), so an attack's cards do not pile up.
    BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS: env.positiveInt(300),
    // Signs the challenges; unset: derived from the API-key pepper. Every replica must share it.
    BROWSER_CHALLENGE_HMAC_KEY: unsetIfEmpty(z.string().min(32, 'must be at least 32 characters').optional()),
    BROWSER_TOKENS_PER_IP_PER_MINUTE: env.nonNegativeInt(10),
    // Distinct card numbers per shopper IP (IPv6: per /64) per hour: a household or an office NAT
    // uses a few; a card tester tries hundreds. Counted as keyed hashes, never card numbers.
    BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: env.nonNegativeInt(8),
    // Strict-Transport-Security on every response, once browsers reach this service over HTTPS.
    HSTS_MAX_AGE_SECONDS: env.nonNegativeInt(0),
    // The development pepper's directory when API_KEY_PEPPER is unset: the gateway's, whose CLI makes
    // the publishable keys this service looks up (a pepper of its own would find none of them).
    TESSERA_STATE_DIR: z
      .string()
      .default('.tessera/gateway')
      .transform((v) => path.resolve(v)),
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
    ...metricsEnvShape,
    ...grpcClientEnvShape,
  })
  .superRefine((cfg, ctx) => {
    checkTlsEnv(cfg, ctx);
    checkRedisTlsEnv(cfg, ctx);
    checkApiKeyPepperEnv(cfg, ctx);
    checkRedisUrlEnv(cfg, ctx, 'publishable keys, form sessions and the card-testing windows are in Redis');
    if (cfg.BROWSER_CHALLENGE_BASE_NUMBER > cfg.BROWSER_CHALLENGE_MAX_NUMBER) {
      ctx.addIssue({
        code: 'custom',
        path: ['BROWSER_CHALLENGE_BASE_NUMBER'],
        message: 'must not exceed BROWSER_CHALLENGE_MAX_NUMBER (the ceiling of every challenge)',
      });
    }
    if (cfg.NODE_ENV !== 'production') return;
    // Browsers must reach the fields over https, at the name the operator chose.
    if (cfg.FIELDS_ORIGIN === undefined) ctx.addIssue({ code: 'custom', path: ['FIELDS_ORIGIN'], message: 'is required in production' });
    else if (!cfg.FIELDS_ORIGIN.startsWith('https://'))
      ctx.addIssue({ code: 'custom', path: ['FIELDS_ORIGIN'], message: 'must be https in production' });
  })
  // Runs only on a config the refinement accepted, which has a REDIS_URL.
  .transform((cfg) => ({ ...cfg, REDIS_URL: cfg.REDIS_URL as string }));

export type FieldsConfig = z.infer<typeof fieldsConfigSchema>;

/** Throws ConfigError listing every bad variable. */
export function parseFieldsConfig(source: NodeJS.ProcessEnv): FieldsConfig {
  return parseConfig(fieldsConfigSchema, source);
}

/** FIELDS_ORIGIN, or outside production the loopback listener (its bound port when FIELDS_PORT is 0). */
export function fieldsOriginOf(config: Pick<FieldsConfig, 'FIELDS_ORIGIN'>, boundPort: number): string {
  return config.FIELDS_ORIGIN ?? `http://127.0.0.1:${boundPort}`;
}
