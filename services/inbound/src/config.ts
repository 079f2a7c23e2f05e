import path from 'node:path';
import { z } from 'zod';
import {
  checkRedisTlsEnv,
  checkTlsEnv,
  env,
  grpcClientEnvShape,
  grpcTarget,
  metricsEnvShape,
  parseConfig,
  tlsEnvShape,
} from '@tessera/common';
import { checkRedisUrlEnv, httpServiceRedisEnvShape, trustedProxiesEnv, unsetIfEmpty } from '@tessera/edge';

/**
 * The inbound routes service (docs/proxies.md, ADR 0013): merchants' inbound routes on INBOUND_PORT.
 * It needs Redis (the routes, read-only, and its card-testing counters), the vault (Tokenize only)
 * and the proxy (ForwardUpstream only), each under its own mTLS identity `inbound`; no internet.
 */
export const inboundConfigSchema = z
  .object({
    INBOUND_PORT: env.port(8083),
    INBOUND_BIND: z.string().min(1).default('127.0.0.1'),
    VAULT_ADDR: grpcTarget('127.0.0.1:50051'),
    VAULT_TIMEOUT_MS: env.positiveInt(2000),
    PROXY_ADDR: grpcTarget('127.0.0.1:50052'),
    // The wait for an upstream's answer to begin, and the longest silence within it (the proxy caps it at its PSP_TIMEOUT_MS).
    INBOUND_UPSTREAM_TIMEOUT_MS: env.positiveInt(30_000),
    // Bodies are read whole before anything is forwarded (the card data must be found first).
    INBOUND_MAX_BODY_BYTES: env.positiveInt(1024 * 1024),
    // How long a replica keeps what it read of the route index and the routes: a route applied or
    // deleted takes effect within this.
    INBOUND_ROUTE_CACHE_MS: env.nonNegativeInt(5000),
    INBOUND_CARDS_PER_ROUTE_PER_MINUTE: env.nonNegativeInt(600),
    INBOUND_CARDS_PER_IP_PER_MINUTE: env.nonNegativeInt(10),
    INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR: env.nonNegativeInt(8),
    // Keys the card fingerprints of the distinct-cards limit; unset outside production: a development
    // secret in TESSERA_STATE_DIR. Every replica must share it. Its own secret (not the API-key
    // pepper): this service reads no API key.
    INBOUND_CARD_FINGERPRINT_KEY: unsetIfEmpty(z.string().min(32, 'must be at least 32 characters').optional()),
    TESSERA_STATE_DIR: z
      .string()
      .default('.tessera/inbound')
      .transform((v) => path.resolve(v)),
    READY_TIMEOUT_MS: env.positiveInt(1000),
    ...httpServiceRedisEnvShape,
    TRUSTED_PROXIES: trustedProxiesEnv,
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
    ...metricsEnvShape,
    ...grpcClientEnvShape,
  })
  .superRefine((cfg, ctx) => {
    checkTlsEnv(cfg, ctx);
    checkRedisTlsEnv(cfg, ctx);
    checkRedisUrlEnv(cfg, ctx, 'the inbound routes and the card-testing counters are in Redis');
    if (cfg.NODE_ENV === 'production' && cfg.INBOUND_CARD_FINGERPRINT_KEY === undefined) {
      ctx.addIssue({ code: 'custom', path: ['INBOUND_CARD_FINGERPRINT_KEY'], message: 'is required in production' });
    }
  })
  .transform((cfg) => ({ ...cfg, REDIS_URL: cfg.REDIS_URL as string }));

export type InboundConfig = z.infer<typeof inboundConfigSchema>;

/** Throws ConfigError listing every bad variable. */
export function parseInboundConfig(source: NodeJS.ProcessEnv): InboundConfig {
  return parseConfig(inboundConfigSchema, source);
}
