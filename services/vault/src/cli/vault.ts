#!/usr/bin/env node
/**
 * Key management for the vault: `rotate`, `rewrap`, `status`.
 * Exit codes: 0 done, 1 failed (Redis unreachable, unreadable records), 2 usage, 78 bad configuration.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, createLogger, parseConfig, UsageError, type CliIo } from '@tessera/common';
import { configSchema, redisTargetOf, type VaultConfig } from '../config';
import { generateKeyRingEntry, KEY_ID_PATTERN, parseKeyRing, type KeyRing } from '../domain/keyRing';
import { countRecordsByKeyId, rewrapAll, type RewrapCheckpoint } from '../keyRotation';
import type { CardStore } from '../store/cardStore';
import { RedisCardStore } from '../store/redisCardStore';

const USAGE = `Usage: npm run vault -- <command> [options]

Commands:
  rotate [--kid <id>]
      Prints ONE new VAULT_KEYS entry (kid:base64) on stdout and nothing else there.
      Append it to VAULT_KEYS (it becomes the current key-encryption key), redeploy the vault,
      then run rewrap.
  rewrap [--batch <n>] [--restart] [--max-batches <n>]
      Re-wraps every record's data key under the newest key of VAULT_KEYS while the vault keeps
      serving. Progress goes to stderr; the SCAN cursor is saved in Redis after every batch, so a
      run that stops resumes where it left off (--restart ignores the saved point).
  status [--batch <n>] [--json]
      Counts records per key id. A key may be removed from VAULT_KEYS once it counts zero.

Environment: VAULT_KEYS and REDIS_URL or REDIS_CLUSTER_NODES (the same values as the vault), TESSERA_STATE_DIR, NODE_ENV.`;

export type Io = CliIo;

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      kid: { type: 'string' },
      batch: { type: 'string' },
      'max-batches': { type: 'string' },
      restart: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}

/** A sortable, human-readable default key id, e.g. k20251123T061500. */
function defaultKeyId(now: Date): string {
  return `k${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}`;
}

/** VAULT_KEYS, or outside production the development key file the vault created (never a new one). */
function keyRingFor(config: VaultConfig): KeyRing {
  if (config.VAULT_KEYS !== undefined) return config.VAULT_KEYS;
  const file = path.join(config.TESSERA_STATE_DIR, 'vault-keys');
  if (!fs.existsSync(file)) throw new ConfigError(['VAULT_KEYS is not set (and there is no development key file)']);
  const parsed = parseKeyRing(fs.readFileSync(file, 'utf8').trim());
  if (!parsed.ok) throw new ConfigError(parsed.problems.map((p) => `development key file: ${p}`));
  return parsed.ring;
}

function describeProgress(c: RewrapCheckpoint): string {
  const s = c.stats;
  return (
    `rewrap -> ${c.targetKeyId}: scanned ${s.scanned} tokens, rewrapped ${s.rewrapped}, migrated ${s.migrated}, ` +
    `already current ${s.alreadyCurrent}, gone ${s.gone}, failed ${s.failed}` +
    (c.cursor === '0' ? ' (complete)' : ` (cursor ${c.cursor})`)
  );
}

export async function run(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: Io,
  openStore?: (config: VaultConfig) => Promise<CardStore>,
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (parsed.values.help || command === undefined) {
    io.err(USAGE);
    return parsed.values.help ? 0 : 2;
  }
  let config: VaultConfig;
  try {
    config = parseConfig(configSchema, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`[vault] ${err.message}`);
      return 78;
    }
    throw err;
  }

  try {
    if (command === 'rotate') {
      const kid = parsed.values.kid ?? defaultKeyId(new Date());
      if (!KEY_ID_PATTERN.test(kid)) throw new UsageError('--kid must be 1-32 characters of A-Z a-z 0-9 _ -');
      if (config.VAULT_KEYS?.keyIds.includes(kid)) throw new UsageError(`key id "${kid}" is already in VAULT_KEYS`);
      // The one deliberate output of key material: stdout only, so it can be piped into a secret store.
      io.out(generateKeyRingEntry(kid));
      io.err(`Append this entry to the END of VAULT_KEYS (comma-separated), redeploy the vault, then run: npm run vault -- rewrap`);
      return 0;
    }
    if (command !== 'rewrap' && command !== 'status') throw new UsageError(`unknown command "${command}"`);
    const batchSize = positiveInt(parsed.values.batch, 'batch', 200);
    const ring = keyRingFor(config);
    const store = await (openStore ?? openRedisStore)(config);
    try {
      if (command === 'status') {
        const usage = await countRecordsByKeyId(store, batchSize);
        if (parsed.values.json) {
          io.out(JSON.stringify({ currentKeyId: ring.currentKeyId, ...usage }));
        } else {
          io.out(`current key: ${ring.currentKeyId}`);
          for (const [kid, n] of Object.entries(usage.byKeyId)) {
            const known = ring.keyIds.includes(kid) ? '' : '  (NOT in VAULT_KEYS)';
            io.out(`${kid}: ${n.card} card, ${n.cvv} cvv records${n.format1 > 0 ? `, ${n.format1} in format 1` : ''}${known}`);
          }
          if (usage.unreadable > 0) io.out(`unreadable: ${usage.unreadable}`);
        }
        return 0;
      }
      const result = await rewrapAll(store, ring, {
        batchSize,
        restart: parsed.values.restart,
        maxBatches: parsed.values['max-batches'] === undefined ? undefined : positiveInt(parsed.values['max-batches'], 'max-batches', 1),
        onProgress: (c) => io.err(describeProgress(c)),
      });
      io.out(JSON.stringify({ done: result.done, targetKeyId: result.checkpoint.targetKeyId, ...result.checkpoint.stats }));
      if (result.checkpoint.stats.failed > 0) {
        io.err('some records could not be opened (unknown key id or failed authentication); they were left unchanged');
        return 1;
      }
      return 0;
    } finally {
      await store.close();
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(`[vault] ${err.message}`);
      return 78;
    }
    io.err(`failed: ${(err as Error).message}`);
    return 1;
  }
}

async function openRedisStore(config: VaultConfig): Promise<CardStore> {
  const target = redisTargetOf(config);
  if (target === undefined) {
    throw new ConfigError(['REDIS_URL or REDIS_CLUSTER_NODES is required: the in-memory store lives inside the vault process']);
  }
  const store = RedisCardStore.connect(target, {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    logger: createLogger('vault-cli', 'silent'),
  });
  if (!(await store.waitUntilReady(5000))) {
    await store.close();
    throw new Error('Redis is not reachable');
  }
  return store;
}

if (require.main === module) {
  run(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
  }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
