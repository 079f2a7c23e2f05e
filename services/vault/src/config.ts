import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  checkRedisTlsEnv,
  checkTlsEnv,
  checkWriteAckEnv,
  env,
  writeAckEnv,
  grpcServerEnvShape,
  metricsEnvShape,
  redisTlsCaFileEnv,
  tlsEnvShape,
} from '@tessera/common';
import { MAX_MESSAGE_BYTES } from '@tessera/protos';
import { parseKeyRing, type EnvKeyRing } from './domain/keyRing';
import { DEFAULT_RENDER_MAX_BYTES } from './domain/renderPspBody';
import { parseHsmKeys, Secret, type HsmKey, type Pkcs11Settings } from './hsm/pkcs11Settings';
import type { RedisTarget } from './store/redisCardStore';

/** A rendered body travels in one Render reply: it must fit a gRPC message with room to spare. */
const MAX_RENDER_MAX_BYTES = MAX_MESSAGE_BYTES - 1024 * 1024;

/** `host:port,host:port` seed nodes of a Redis Cluster; the client discovers the rest. */
export const clusterNodes = env.csv().superRefine((list, ctx) => {
  for (const entry of list) {
    if (!/^[^\s:]+:\d{1,5}$/.test(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" is not host:port` });
  }
});

/** An optional key list read by `parse` (empty: unset); each problem is reported on its own. */
function keyList<T>(parse: (text: string) => { ok: true; value: T } | { ok: false; problems: string[] }) {
  return z
    .string()
    .optional()
    .transform((text, ctx): T | undefined => {
      if (text === undefined || text.trim() === '') return undefined;
      const parsed = parse(text);
      if (parsed.ok) return parsed.value;
      for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    });
}

const vaultKeys = keyList<EnvKeyRing>((text) => {
  const parsed = parseKeyRing(text);
  return parsed.ok ? { ok: true, value: parsed.ring } : parsed;
});

const hsmKeys = keyList<HsmKey[]>((text) => {
  const parsed = parseHsmKeys(text);
  return parsed.ok ? { ok: true, value: parsed.keys } : parsed;
});

const optionalText = z
  .string()
  .optional()
  .transform((text) => (text === undefined || text.trim() === '' ? undefined : text.trim()));

/** The PIN never appears in an issue message, not even in part. */
const pin = z
  .string()
  .optional()
  .transform((text) => (text === undefined || text === '' ? undefined : new Secret(text)));

/** A file holding the PIN (a mounted secret), read once at start-up; one trailing newline is ignored. */
const pinFile = z
  .string()
  .optional()
  .transform((file, ctx): Secret | undefined => {
    if (file === undefined || file.trim() === '') return undefined;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` });
      return z.NEVER;
    }
    if (text === '') {
      ctx.addIssue({ code: 'custom', message: 'is empty' });
      return z.NEVER;
    }
    return new Secret(text);
  });

const slotId = z
  .string()
  .optional()
  .transform((text, ctx): bigint | undefined => {
    if (text === undefined || text.trim() === '') return undefined;
    if (!/^\d{1,20}$/.test(text.trim())) {
      ctx.addIssue({ code: 'custom', message: 'must be a slot id (a decimal number, as pkcs11-tool -L prints it)' });
      return z.NEVER;
    }
    return BigInt(text.trim());
  });

const PKCS11_VARIABLES = ['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_SLOT', 'PKCS11_PIN', 'PKCS11_PIN_FILE'] as const;

export const configSchema = z
  .object({
    VAULT_ADDR: env.hostPort('127.0.0.1:50051'),
    REDIS_URL: env.redisUrl(),
    // Set: the card store is a Redis Cluster (keys carry the {token} hash tag); REDIS_URL, if set, then only lends its credentials/TLS.
    REDIS_CLUSTER_NODES: clusterNodes,
    REDIS_TLS_CA_FILE: redisTlsCaFileEnv,
    VAULT_WRITE_ACK: writeAckEnv(),
    VAULT_KEYS: vaultKeys,
    // Which provider's newest key wraps new data keys; the other one's keys, if configured, stay readable (docs/adr/0009).
    VAULT_KEK_PROVIDER: z.enum(['env', 'pkcs11']).default('env'),
    PKCS11_MODULE: optionalText,
    PKCS11_TOKEN_LABEL: optionalText,
    PKCS11_SLOT: slotId,
    PKCS11_PIN: pin,
    PKCS11_PIN_FILE: pinFile,
    PKCS11_KEYS: hsmKeys,
    CVV_TTL_SECONDS: env.positiveInt(3600),
    CARD_GRACE_DAYS: env.nonNegativeInt(30),
    EVENT_SWEEP_INTERVAL_SECONDS: env.positiveInt(3600),
    TOKEN_EXPIRING_SOON_DAYS: env.positiveInt(30),
    // token.expiring_soon reads every card record (no index): a new pass this long after the last began.
    TOKEN_EXPIRING_SOON_PASS_SECONDS: env.positiveInt(86_400),
    // Card imports (docs/adr/0015-card-import.md): how often a vault looks for queued imports, how long its
    // lease on one lasts unrenewed (a vault killed mid-import is replaced after this), the cards per checkpoint (two batches in flight),
    // and how long a finished import's status and encrypted report are kept.
    IMPORT_POLL_INTERVAL_MS: env.positiveInt(5000),
    IMPORT_LEASE_MS: env.positiveInt(30_000),
    IMPORT_BATCH_SIZE: env.positiveInt(250).refine((n) => n <= 10_000, { error: 'must be at most 10000' }),
    IMPORT_KEEP_DAYS: env.positiveInt(30),
    // Card exports (docs/migration.md#leaving-tessera-export): how long the encrypted file stays downloadable.
    EXPORT_FILE_TTL_SECONDS: env.positiveInt(86_400),
    // Applied here, not in the gateway: the vault sets every TTL, so no caller can lengthen a browser token's life.
    BROWSER_TOKEN_TTL_SECONDS: env.positiveInt(3600),
    // Bounds each card-store operation as a whole (queueing included). Keep it below the callers'
    // VAULT_TIMEOUT_MS (gateway, proxy; 2000) so a stalled store answers 503 before the caller gives up.
    REDIS_COMMAND_TIMEOUT_MS: env.positiveInt(1000),
    // The most bytes one rendered PSP body may have; a larger one is refused (422 rendered_body_too_large).
    RENDER_MAX_BYTES: env.positiveInt(DEFAULT_RENDER_MAX_BYTES).refine((n) => n <= MAX_RENDER_MAX_BYTES, {
      error: `must be at most ${MAX_RENDER_MAX_BYTES} (the gRPC message limit less room for framing)`,
    }),
    // The vault's own development state (its generated key ring): no other service is told of it.
    TESSERA_STATE_DIR: z
      .string()
      .default('.tessera/vault')
      .transform((dir) => path.resolve(dir)),
    NODE_ENV: env.nodeEnv(),
    LOG_LEVEL: env.logLevel(),
    ...tlsEnvShape,
    // The fields service's certificate (the shoppers' surfaces): the vault lets it only tokenize provisionally and attach a CVC under a grant.
    TLS_PEER_FIELDS: z.string().min(1).default('fields'),
    // The inbound routes service's certificate (ADR 0013): the vault lets it only tokenize (durable, never dedupe).
    TLS_PEER_INBOUND: z.string().min(1).default('inbound'),
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
      // A missing Redis is one problem, reported below, not also one of VAULT_WRITE_ACK's.
      checkWriteAckEnv(
        'VAULT_WRITE_ACK',
        config.VAULT_WRITE_ACK,
        { hasRedis: true, redisVariables: 'REDIS_URL or REDIS_CLUSTER_NODES', commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS },
        ctx,
      );
      checkPkcs11Env(config, ctx);
      if (!hasRedis) {
        ctx.addIssue({
          code: 'custom',
          path: ['REDIS_URL'],
          message:
            'is required (or REDIS_CLUSTER_NODES): the vault keeps cards only in Redis, in every NODE_ENV; npm start runs one for development',
        });
      }
      if (config.NODE_ENV !== 'production') return;
      if (config.VAULT_KEYS === undefined && config.VAULT_KEK_PROVIDER !== 'pkcs11') {
        ctx.addIssue({
          code: 'custom',
          path: ['VAULT_KEYS'],
          message: 'is required when NODE_ENV=production',
        });
      }
    },
    { when: () => true },
  )
  .transform((config) => ({ ...config, PKCS11: pkcs11SettingsOf(config) }));

export type VaultConfig = z.infer<typeof configSchema>;

interface Pkcs11Env {
  VAULT_KEK_PROVIDER?: 'env' | 'pkcs11';
  VAULT_KEYS?: EnvKeyRing;
  PKCS11_MODULE?: string;
  PKCS11_TOKEN_LABEL?: string;
  PKCS11_SLOT?: bigint;
  PKCS11_PIN?: Secret;
  PKCS11_PIN_FILE?: Secret;
  PKCS11_KEYS?: HsmKey[];
}

/** The HSM is used when it is the current provider, or when PKCS11_KEYS lists read-only keys in it. */
function checkPkcs11Env(config: Pkcs11Env, ctx: z.RefinementCtx): void {
  // PKCS11_KEYS may hold raw input here when it failed its own check: it still says an HSM is meant.
  const usesHsm = config.VAULT_KEK_PROVIDER === 'pkcs11' || config.PKCS11_KEYS !== undefined;
  const issue = (variable: string, message: string) => ctx.addIssue({ code: 'custom', path: [variable], message });
  if (!usesHsm) {
    for (const variable of PKCS11_VARIABLES) {
      if (config[variable] !== undefined) issue(variable, 'is set but no HSM key is: set PKCS11_KEYS (and VAULT_KEK_PROVIDER=pkcs11)');
    }
    return;
  }
  if (config.VAULT_KEK_PROVIDER === 'pkcs11' && config.PKCS11_KEYS === undefined) {
    issue('PKCS11_KEYS', 'is required with VAULT_KEK_PROVIDER=pkcs11: list keyId:label of the HSM keys, newest last');
  }
  if (config.PKCS11_MODULE === undefined) {
    issue('PKCS11_MODULE', "is required to use an HSM: the path of its vendor's PKCS#11 library");
  } else if (typeof config.PKCS11_MODULE === 'string' && !fs.existsSync(config.PKCS11_MODULE)) {
    issue('PKCS11_MODULE', `no such file: ${config.PKCS11_MODULE}`);
  }
  if ((config.PKCS11_TOKEN_LABEL === undefined) === (config.PKCS11_SLOT === undefined)) {
    issue('PKCS11_TOKEN_LABEL', 'set exactly one of PKCS11_TOKEN_LABEL and PKCS11_SLOT to choose the token');
  }
  if ((config.PKCS11_PIN === undefined) === (config.PKCS11_PIN_FILE === undefined)) {
    issue('PKCS11_PIN', 'set exactly one of PKCS11_PIN and PKCS11_PIN_FILE (the crypto user PIN of the token)');
  }
  if (Array.isArray(config.PKCS11_KEYS) && config.VAULT_KEYS !== undefined && typeof config.VAULT_KEYS === 'object') {
    const envIds = config.VAULT_KEYS.keyIds;
    for (const { keyId } of config.PKCS11_KEYS) {
      if (envIds.includes(keyId)) issue('PKCS11_KEYS', `key id "${keyId}" is also in VAULT_KEYS: key ids must be unique across providers`);
    }
  }
}

function pkcs11SettingsOf(config: Pkcs11Env): Pkcs11Settings | undefined {
  const pinSecret = config.PKCS11_PIN ?? config.PKCS11_PIN_FILE;
  if (config.PKCS11_KEYS === undefined || config.PKCS11_MODULE === undefined || pinSecret === undefined) return undefined;
  const token = config.PKCS11_TOKEN_LABEL !== undefined ? { label: config.PKCS11_TOKEN_LABEL } : { slotId: config.PKCS11_SLOT ?? 0n };
  return { modulePath: config.PKCS11_MODULE, token, pin: pinSecret, keys: config.PKCS11_KEYS };
}

/** The card store's Redis: a Cluster when REDIS_CLUSTER_NODES is set, else REDIS_URL (the schema requires one of them). */
export function redisTargetOf(
  config: Pick<VaultConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'> & Partial<Pick<VaultConfig, 'REDIS_TLS_CA_FILE'>>,
): RedisTarget {
  const tlsCaFile = config.REDIS_TLS_CA_FILE;
  if (config.REDIS_CLUSTER_NODES.length > 0)
    return { clusterNodes: config.REDIS_CLUSTER_NODES, credentialsUrl: config.REDIS_URL, tlsCaFile };
  if (config.REDIS_URL === undefined) throw new Error('REDIS_URL or REDIS_CLUSTER_NODES is required');
  return { url: config.REDIS_URL, tlsCaFile };
}
