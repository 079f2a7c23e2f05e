import path from 'node:path';
import { z } from 'zod';
import { checkRedisTlsEnv, checkTlsEnv, env, grpcServerEnvShape, metricsEnvShape, redisTlsCaFileEnv, tlsEnvShape } from '@tessera/common';
import { MAX_MESSAGE_BYTES } from '@tessera/protos';
import { parseKeyRing, type KeyRing } from './domain/keyRing';
import { DEFAULT_RENDER_MAX_BYTES } from './domain/renderPspBody';
import { parseWriteAck, type WriteAck } from './domain/writeAck';
import type { RedisTarget } from './store/redisCardStore';

const writeAck = z
  .string()
  .default('none')
  .transform((text, ctx): WriteAck => {
    const parsed = parseWriteAck(text);
    if (parsed.ok) return parsed.ack;
    ctx.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  });

/** A rendered body travels in one Render reply: it must fit a gRPC message with room to spare. */
const MAX_RENDER_MAX_BYTES = MAX_MESSAGE_BYTES - 1024 * 1024;

/** `host:port,host:port` seed nodes of a Redis Cluster; the client discovers the rest. */
export const clusterNodes = env.csv().superRefine((list, ctx) => {
  for (const entry of list) {
    if (!/^[^\s:]+:\d{1,5}$/.test(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" is not host:port` });
  }
});

const vaultKeys = z
  .string()
  .optional()
  .transform((text, ctx): KeyRing | undefined => {
    if (text === undefined || text.trim() === '') return undefined;
    const parsed = parseKeyRing(text);
    if (parsed.ok) return parsed.ring;
    for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  });

export const configSchema = z
  .object({
    VAULT_ADDR: env.hostPort('127.0.0.1:50051'),
    REDIS_URL: env.redisUrl(),
    // Set: the card store is a Redis Cluster (keys carry the {token} hash tag); REDIS_URL, if set, then only lends its credentials/TLS.
    REDIS_CLUSTER_NODES: clusterNodes,
    REDIS_TLS_CA_FILE: redisTlsCaFileEnv,
    VAULT_WRITE_ACK: writeAck,
    VAULT_KEYS: vaultKeys,
    CVV_TTL_SECONDS: env.positiveInt(3600),
    CARD_GRACE_DAYS: env.nonNegativeInt(30),
    // Applied here, not in the gateway: the vault sets every TTL, so no caller can lengthen a browser token's life.
    BROWSER_TOKEN_TTL_SECONDS: env.positiveInt(3600),
    // Bounds each card-store operation as a whole (queueing included). Keep it below the callers'
    // VAULT_TIMEOUT_MS (gateway, proxy; 2000) so a stalled store answers 503, not the caller's 504.
    REDIS_COMMAND_TIMEOUT_MS: env.positiveInt(1000),
    // The most bytes one rendered PSP body may have; a larger one is refused (422 rendered_body_too_large).
    RENDER_MAX_BYTES: env.positiveInt(DEFAULT_RENDER_MAX_BYTES).refine((n) => n <= MAX_RENDER_MAX_BYTES, {
      error: `must be at most ${MAX_RENDER_MAX_BYTES} (the gRPC message limit less room for framing)`,
    }),
    TESSERA_STATE_DIR: z
      .string()
      .default('.tessera')
      .transform((dir) => path.resolve(dir)),
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
    ...metricsEnvShape,
    ...grpcServerEnvShape,
  })
  // Runs even when other variables are bad, so one start-up lists every problem.
  .superRefine(
    (config, ctx) => {
      checkTlsEnv(config, ctx);
      checkRedisTlsEnv(config, ctx);
      // Fields that failed their own check may hold raw input here: look only at parsed shapes.
      const hasRedis =
        config.REDIS_URL !== undefined || (Array.isArray(config.REDIS_CLUSTER_NODES) && config.REDIS_CLUSTER_NODES.length > 0);
      if (config.VAULT_WRITE_ACK?.kind !== undefined && config.VAULT_WRITE_ACK.kind !== 'none' && !hasRedis) {
        ctx.addIssue({ code: 'custom', path: ['VAULT_WRITE_ACK'], message: 'needs REDIS_URL or REDIS_CLUSTER_NODES' });
      }
      if (config.VAULT_WRITE_ACK?.kind === 'replicas' && config.VAULT_WRITE_ACK.timeoutMs >= config.REDIS_COMMAND_TIMEOUT_MS) {
        // Otherwise the command timeout fires first and every write would look like an outage.
        ctx.addIssue({
          code: 'custom',
          path: ['VAULT_WRITE_ACK'],
          message: 'the WAIT timeout must be below REDIS_COMMAND_TIMEOUT_MS',
        });
      }
      if (config.NODE_ENV !== 'production') return;
      if (config.VAULT_KEYS === undefined) {
        ctx.addIssue({ code: 'custom', path: ['VAULT_KEYS'], message: 'is required when NODE_ENV=production' });
      }
      if (!hasRedis) {
        ctx.addIssue({
          code: 'custom',
          path: ['REDIS_URL'],
          message: 'is required when NODE_ENV=production (the in-memory store loses tokens)',
        });
      }
    },
    { when: () => true },
  );

export type VaultConfig = z.infer<typeof configSchema>;

/** The card store's Redis: a Cluster when REDIS_CLUSTER_NODES is set, else REDIS_URL; undefined: in memory. */
export function redisTargetOf(
  config: Pick<VaultConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'> & Partial<Pick<VaultConfig, 'REDIS_TLS_CA_FILE'>>,
): RedisTarget | undefined {
  const tlsCaFile = config.REDIS_TLS_CA_FILE;
  if (config.REDIS_CLUSTER_NODES.length > 0)
    return { clusterNodes: config.REDIS_CLUSTER_NODES, credentialsUrl: config.REDIS_URL, tlsCaFile };
  return config.REDIS_URL === undefined ? undefined : { url: config.REDIS_URL, tlsCaFile };
}
