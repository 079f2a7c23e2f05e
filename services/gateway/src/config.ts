import path from 'node:path';
import { z } from 'zod';
import {
  checkRedisTlsEnv,
  checkTlsEnv,
  checkWriteAckEnv,
  env,
  grpcClientEnvShape,
  grpcTarget,
  metricsEnvShape,
  parseConfig,
  tlsEnvShape,
  writeAckEnv,
} from '@tessera/common';
import { apiKeyPepperEnvShape, checkApiKeyPepperEnv, isApiKeyFormat } from '@tessera/merchant-data';
import { checkRedisUrlEnv, httpServiceRedisEnvShape, publicOrigin, trustedProxiesEnv, unsetIfEmpty } from '@tessera/edge';

// Shared with the admin and fields services, which hash and look up keys under the same pepper.
export { MIN_PEPPER_LENGTH, resolveApiKeyPepper, type ResolvedPepper } from '@tessera/merchant-data';

export const gatewayConfigSchema = z
  .object({
    PORT: env.port(8080),
    HOST: z.string().min(1).default('127.0.0.1'),
    // gRPC targets: host:port, dns:///host:port (every replica DNS returns) or ipv4:a:p,b:q; see docs/scaling.md.
    VAULT_ADDR: grpcTarget('127.0.0.1:50051'),
    PROXY_ADDR: grpcTarget('127.0.0.1:50052'),
    VAULT_TIMEOUT_MS: env.positiveInt(2000),
    // Must outlast the proxy's own budget (PSP_CONNECT_TIMEOUT_MS + VAULT_TIMEOUT_MS +
    // PSP_TIMEOUT_MS, 37 s by default) so that a slow PSP surfaces as psp_timeout from the proxy
    // rather than as psp_outcome_unknown at our own deadline.
    PROXY_TIMEOUT_MS: env.positiveInt(40000),
    READY_TIMEOUT_MS: env.positiveInt(1000),
    ...httpServiceRedisEnvShape,
    ...apiKeyPepperEnvShape,
    TRUSTED_PROXIES: trustedProxiesEnv,
    TESSERA_DEV_API_KEY: unsetIfEmpty(
      z
        .string()
        .refine(
          (v) => isApiKeyFormat(v) && v.startsWith('tsk_test_'),
          'must be a test key: tsk_test_ followed by 32 letters or digits and, for keys made since the checksum was added, its 6-character checksum',
        )
        .optional(),
    ),
    BODY_LIMIT_BYTES: env.positiveInt(1_048_576),
    // The forward proxy (docs/proxies.md): an HTTP CONNECT proxy for the PSP hosts of the merchants'
    // outbound routes, on HOST, authenticated by a secret key (HTTPS_PROXY=http://x:tsk_…@host:port).
    // Unset: not served. `npm start` sets 8084.
    FORWARD_PROXY_PORT: unsetIfEmpty(z.coerce.number().int().min(0).max(65535).optional()),
    // How long an Idempotency-Key's first answer is replayed (24 h, as the SDKs' retry windows assume).
    IDEMPOTENCY_TTL_SECONDS: env.positiveInt(86_400),
    // Largest answer (body and headers) kept for replay. Payment answers are a few KB of JSON; 64 KiB
    // still keeps a 3-D Secure page, while a PSP answer of up to 10 MiB is no longer held for 24 h.
    IDEMPOTENCY_MAX_STORED_BYTES: env.positiveInt(65_536),
    // Bytes of idempotency records one merchant may hold per mode over the replay window (0: no
    // limit). 128 MiB is about 100,000 typical answers a day; raise it for a bigger merchant.
    IDEMPOTENCY_MAX_BYTES_PER_MERCHANT: env.nonNegativeInt(134_217_728),
    // A Redis of their own for idempotency records (default: REDIS_URL's), so that they can never
    // fill the memory the card store needs. Never part of a Cluster (REDIS_CLUSTER_NODES).
    IDEMPOTENCY_REDIS_URL: unsetIfEmpty(env.redisUrl()),
    // How durable a claim and a stored answer must be before they are relied on, as VAULT_WRITE_ACK
    // for cards: a claim lost in a failover lets a retry pay again (docs/failure-modes.md).
    IDEMPOTENCY_WRITE_ACK: writeAckEnv(),
    // 0 disables. Per key: generous for a merchant backend (a checkout rarely needs more than a
    // few calls per second), low enough that a leaked key cannot flood the vault and the PSP.
    RATE_LIMIT_PER_KEY_PER_SECOND: env.nonNegativeInt(100),
    // Per client IP (an IPv6 /64): 401s per minute before further attempts get 429, so keys
    // cannot be guessed or sprayed online.
    RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: env.nonNegativeInt(30),
    // How long a request waits for a rate-limit or card-testing counter before going through as if
    // under its limit (they fail open). Shorter than REDIS_COMMAND_TIMEOUT_MS: a counter lives in
    // the client address's slot, so with that Cluster master down every request from the address
    // would otherwise wait the full command timeout although its key had answered at once.
    RATE_LIMIT_STORE_TIMEOUT_MS: env.positiveInt(100),
    // Strict-Transport-Security on every response; only meaningful when clients reach the gateway
    // over HTTPS (a TLS-terminating load balancer), so off by default. 31536000 = one year.
    HSTS_MAX_AGE_SECONDS: env.nonNegativeInt(0),
    // Processes serving the public port (node:cluster); see docs/PERFORMANCE.md before raising it.
    GATEWAY_WORKERS: env.positiveInt(1),
    // Hosted payment page (form sessions, docs/browser.md): how long a session's page can be used.
    FORM_SESSION_TTL_SECONDS: env.positiveInt(1800),
    // tessera.cvcField: how long a CVC session (the single-use grant a secret key opens for one
    // token, POST /v1/token/{token}/cvc-sessions) can be used. Minutes: the shopper is on the page,
    // so at most an hour: a grant to attach a CVV must not outlive the checkout it was opened for.
    CVC_SESSION_TTL_SECONDS: z.coerce.number().int().positive().max(3600, 'must be at most 3600 (an hour)').default(600),
    // Events (GET /v1/events, docs/webhooks.md): how long each is kept and listed, in days.
    EVENT_RETENTION_DAYS: z.coerce.number().int().min(1, 'must be at least 1').max(365, 'must be at most 365').default(30),
    // The fields service's public origin (services/fields): where a form session's hosted page is
    // (`${FIELDS_ORIGIN}/pay/{id}`). Unset: no form sessions (POST /v1/form-sessions is not served).
    FIELDS_ORIGIN: unsetIfEmpty(publicOrigin.optional()),
    // Entries kept in the detokenization audit stream (Redis trims approximately, MAXLEN ~).
    DETOKENIZATION_AUDIT_MAX_ENTRIES: env.positiveInt(100_000),
    // The request log (docs/operations.md#request-log): per merchant, whichever limit comes first.
    REQUEST_LOG_MAX_ENTRIES: env.nonNegativeInt(100_000),
    REQUEST_LOG_MAX_AGE_SECONDS: env.positiveInt(7 * 86_400),
    REQUEST_LOG_BUFFER_ENTRIES: env.positiveInt(10_000),
    // Webhook delivery (docs/webhooks.md, "Delivery, retries and ordering"): each gateway process
    // runs a dispatcher; leases keep replicas from serving the same endpoint at once.
    WEBHOOK_DELIVERY: z.enum(['on', 'off']).default('on'),
    // How long a delivery is retried before it is given up: 3 days.
    WEBHOOK_RETRY_WINDOW_SECONDS: env.positiveInt(3 * 86_400),
    // Exponential backoff with full jitter: the n-th retry waits a random time below min(max, base * 2^(n-1)).
    WEBHOOK_BACKOFF_BASE_MS: env.positiveInt(5_000),
    WEBHOOK_BACKOFF_MAX_MS: env.positiveInt(3_600_000),
    // One attempt's deadline (connect, send, answer), at most the proxy's PSP_TIMEOUT_MS.
    WEBHOOK_TIMEOUT_MS: env.positiveInt(10_000),
    // Deliveries in flight per endpoint, never two of the same object.
    WEBHOOK_ENDPOINT_CONCURRENCY: env.positiveInt(16),
    // Only failures for this long disable an endpoint; unset: the retry window.
    WEBHOOK_DISABLE_AFTER_SECONDS: unsetIfEmpty(z.coerce.number().int().positive().optional()),
    // An endpoint's lease, and how long a dispatcher that died keeps what it read before another takes it over.
    WEBHOOK_LEASE_MS: env.positiveInt(15_000),
    // The gateway's own development state (its generated pepper): never the vault's directory.
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
    checkWriteAckEnv(
      'IDEMPOTENCY_WRITE_ACK',
      cfg.IDEMPOTENCY_WRITE_ACK,
      // A Redis is always there: REDIS_URL is required below.
      { hasRedis: true, redisVariables: 'REDIS_URL', commandTimeoutMs: cfg.REDIS_COMMAND_TIMEOUT_MS },
      ctx,
    );
    checkRedisUrlEnv(cfg, ctx, 'the gateway keeps API keys, counters and idempotency records in Redis only');
    checkApiKeyPepperEnv(cfg, ctx);
    if (cfg.NODE_ENV !== 'production') return;
    if (cfg.FIELDS_ORIGIN !== undefined && !cfg.FIELDS_ORIGIN.startsWith('https://')) {
      ctx.addIssue({ code: 'custom', path: ['FIELDS_ORIGIN'], message: 'must be https in production' });
    }
    if (cfg.TESSERA_DEV_API_KEY !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['TESSERA_DEV_API_KEY'],
        message: 'must not be set in production (it registers a well-known key)',
      });
    }
  })
  // Runs only on a config the refinement accepted, which has a REDIS_URL.
  .transform((cfg) => ({ ...cfg, REDIS_URL: cfg.REDIS_URL as string }));

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

/** Throws ConfigError listing every bad variable; main and the CLI decide how to exit. */
export function parseGatewayConfig(source: NodeJS.ProcessEnv): GatewayConfig {
  return parseConfig(gatewayConfigSchema, source);
}
