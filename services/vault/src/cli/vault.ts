#!/usr/bin/env node
/**
 * Key management for the vault: `rotate`, `rewrap`, `status`, `shred`.
 * Exit codes: 0 done, 1 failed (Redis unreachable, unreadable records), 2 usage, 78 bad configuration.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  createLogger,
  parseCommandLine,
  parseConfig,
  runCliMain,
  UsageError,
  withLocalStack,
  type CliIo,
} from '@tessera/common';
import { configSchema, redisTargetOf, type VaultConfig } from '../config';
import { generateKeyRingEntry, KEY_ID_PATTERN, parseKeyRing, type EnvKeyRing, type KeyRing } from '../domain/keyRing';
import { generateHsmKek, HsmError } from '../hsm/pkcs11KeyRing';
import { parseHsmKeys } from '../hsm/pkcs11Settings';
import { openKeyRing } from '../openKeyRing';
import { countCaKeysByKekId, countRecordsByKeyId, rewrapAll, rewrapCaKeys, type RewrapCheckpoint } from '../app/keyRotation';
import type { CardStore } from '../store/cardStore';
import { MerchantKeyRings, type MerchantKekStore } from '../app/merchantKeys';
import { runShredOrders } from '../app/cryptoShredding';
import { openMerchantData } from '../openMerchantData';
import { RedisCaKeyStore, type CaKeyStore } from '../store/caKeyStore';
import { connectRedis, RedisCardStore } from '../store/redisCardStore';
import { IMPORT_USAGE, runImportCommand } from './importCommands';

const USAGE = `Usage: npm run vault -- <command> [options]

Commands:
  rotate [--kid <id>] [--label <HSM key label>]
      With VAULT_KEK_PROVIDER=env: prints ONE new VAULT_KEYS entry (kid:base64) on stdout and
      nothing else there. Append it to VAULT_KEYS (it becomes the current key-encryption key).
      With VAULT_KEK_PROVIDER=pkcs11: generates a new non-extractable AES-256 key inside the HSM
      (label defaults to the kid) and prints its PKCS11_KEYS entry (kid:label); append that to
      PKCS11_KEYS. Either way, redeploy the vault, then run rewrap.
  rewrap [--batch <n>] [--restart] [--max-batches <n>]
      Moves every merchant key-encryption key under the current root key (the newest of VAULT_KEYS,
      or of PKCS11_KEYS with VAULT_KEK_PROVIDER=pkcs11; the other provider's keys are read), then
      re-wraps every record's data key under its merchant and mode's key (made on first use), while
      the vault keeps serving; the fingerprint key and the merchants' forward-proxy CA keys go under
      the current root key. Progress goes to stderr; the SCAN cursor is saved in Redis after every
      batch, so a run that stops resumes where it left off (--restart ignores the saved point).
  status [--batch <n>] [--json]
      Counts records per root key id, records under merchant keys, merchant keys per root key id and
      forward-proxy CA keys per root key id. A root key may be removed once it counts zero in all.

  shred
      Carries out now the crypto-shredding orders two operators approved in the admin API
      (POST /admin/v1/merchants/{id}/shred-requests, then .../shred-orders/{id}/approve): destroys
      each merchant key (and, for mode "all", the merchant's forward-proxy CA), then sweeps the
      records. The vault does the same on its own within a second; this is for when no vault runs.
      Prints {"carriedOut": n}. It never shreds without an approved order.
${IMPORT_USAGE}

Environment: the vault's own: VAULT_KEYS, VAULT_KEK_PROVIDER, PKCS11_*, REDIS_URL or REDIS_CLUSTER_NODES, TESSERA_STATE_DIR, NODE_ENV.
Beside npm start none: without REDIS_URL or REDIS_CLUSTER_NODES it reads what npm start wrote in .tessera/vault/stack.json
(or stack.json in TESSERA_STATE_DIR).`;

export type Io = CliIo;

const OPTIONS = {
  kid: { type: 'string' },
  label: { type: 'string' },
  batch: { type: 'string' },
  'max-batches': { type: 'string' },
  restart: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  merchant: { type: 'string' },
  mode: { type: 'string' },
  format: { type: 'string' },
  'report-key': { type: 'string' },
  'key-type': { type: 'string' },
  'public-key-out': { type: 'string' },
  out: { type: 'string' },
  wait: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

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

/** Outside production, the development key file the vault created (never a new one). */
function developmentKeyRing(config: VaultConfig): EnvKeyRing {
  const file = path.join(config.TESSERA_STATE_DIR, 'vault-keys');
  if (!fs.existsSync(file)) throw new ConfigError(['VAULT_KEYS is not set (and there is no development key file)']);
  const parsed = parseKeyRing(fs.readFileSync(file, 'utf8').trim());
  if (!parsed.ok) throw new ConfigError(parsed.problems.map((p) => `development key file: ${p}`));
  return parsed.ring;
}

const WHERE = { env: 'VAULT_KEYS', pkcs11: 'HSM' } as const;

function describeProgress(c: RewrapCheckpoint): string {
  const s = c.stats;
  return (
    `rewrap -> ${c.targetKeyId}: scanned ${s.scanned} tokens, rewrapped ${s.rewrapped}, migrated ${s.migrated}, ` +
    `already current ${s.alreadyCurrent}, gone ${s.gone}, shredded ${s.shredded}, ` +
    `merchant keys rewrapped ${s.merchantKeksRewrapped}, failed ${s.failed}` +
    (c.cursor === '0' ? ' (complete)' : ` (cursor ${c.cursor})`)
  );
}

/** The merchants' forward-proxy CAs, over a connection of their own; `close` ends it. */
export type CaKeysOpener = (config: VaultConfig) => Promise<{ cas: CaKeyStore; close(): Promise<void> }>;

export async function run(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: Io,
  openStore?: (config: VaultConfig) => Promise<CardStore>,
  openCaKeys: CaKeysOpener = openRedisCaKeys,
): Promise<number> {
  const commandLine = parseCommandLine(argv, OPTIONS, USAGE, io);
  if (!commandLine.ok) return commandLine.exitCode;
  const parsed = commandLine.args;
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
      if (config.PKCS11_KEYS?.some((k) => k.keyId === kid)) throw new UsageError(`key id "${kid}" is already in PKCS11_KEYS`);
      if (config.VAULT_KEK_PROVIDER === 'pkcs11') {
        const entry = `${kid}:${parsed.values.label ?? kid}`;
        const checked = parseHsmKeys(entry);
        if (!checked.ok || checked.keys[0] === undefined)
          throw new UsageError(`--label: ${checked.ok ? 'missing' : checked.problems.join('; ')}`);
        if (config.PKCS11 === undefined) throw new ConfigError(['PKCS11_* must be set to generate a key in the HSM']);
        generateHsmKek(config.PKCS11, checked.keys[0].label);
        // A name, not key material: the key itself never leaves the HSM.
        io.out(entry);
        io.err(
          `Generated the key in the HSM. Append this entry to the END of PKCS11_KEYS, redeploy the vault, then run: npm run vault -- rewrap`,
        );
        return 0;
      }
      if (parsed.values.label !== undefined) throw new UsageError('--label is for VAULT_KEK_PROVIDER=pkcs11');
      // The one deliberate output of key material: stdout only, so it can be piped into a secret store.
      io.out(generateKeyRingEntry(kid));
      io.err(`Append this entry to the END of VAULT_KEYS (comma-separated), redeploy the vault, then run: npm run vault -- rewrap`);
      return 0;
    }
    if (command === 'import') {
      return await runImportCommand(
        parsed,
        config,
        () => {
          const keys = openKeyRing(config, () => developmentKeyRing(config));
          return { ring: keys.ring, close: () => keys.close() };
        },
        io,
      );
    }
    if (command !== 'rewrap' && command !== 'status' && command !== 'shred') throw new UsageError(`unknown command "${command}"`);
    const batchSize = positiveInt(parsed.values.batch, 'batch', 200);
    const keys = openKeyRing(config, () => developmentKeyRing(config));
    const ring = keys.ring;
    let store: CardStore;
    let caKeys: Awaited<ReturnType<CaKeysOpener>>;
    try {
      store = await (openStore ?? openRedisStore)(config);
    } catch (err) {
      keys.close();
      throw err;
    }
    try {
      caKeys = await openCaKeys(config);
    } catch (err) {
      await store.close();
      keys.close();
      throw err;
    }
    try {
      if (command === 'shred') {
        const keks = merchantKekStoreOf(store);
        if (keks === undefined) throw new Error('this card store keeps no merchant keys');
        const data = await openMerchantData(config, createLogger('vault-cli', 'silent'));
        try {
          const carriedOut = await runShredOrders({
            store,
            keks,
            rings: new MerchantKeyRings({ root: ring, store: keks }),
            cas: caKeys.cas,
            orders: data.shredOrders,
            recorder: data.events,
            now: () => new Date(),
            logger: createLogger('vault-cli', 'silent'),
          });
          io.out(JSON.stringify({ carriedOut }));
          return 0;
        } finally {
          await data.close();
        }
      }
      if (command === 'status') {
        const usage = await countRecordsByKeyId(store, batchSize, merchantKekStoreOf(store));
        const caUsage = await countCaKeysByKekId(caKeys.cas);
        if (parsed.values.json) {
          const providers = Object.fromEntries(ring.keyIds.map((kid) => [kid, ring.providerOf(kid)]));
          io.out(JSON.stringify({ currentKeyId: ring.currentKeyId, providers, ...usage, caKeys: caUsage }));
        } else {
          // Where a key lives is worth a word only when both providers can be in use.
          const withHsm = config.PKCS11 !== undefined;
          io.out(`current key: ${ring.currentKeyId}${withHsm ? ` (${WHERE[keys.describe.provider]})` : ''}`);
          for (const [kid, n] of Object.entries(usage.byKeyId)) {
            const provider = ring.providerOf(kid);
            const known =
              provider === undefined
                ? '  (NOT configured: in neither VAULT_KEYS nor PKCS11_KEYS)'
                : withHsm
                  ? `  (${WHERE[provider]})`
                  : '';
            io.out(`${kid}: ${n.card} card, ${n.cvv} cvv records${n.format1 > 0 ? `, ${n.format1} in format 1` : ''}${known}`);
          }
          const merchantKeks = usage.underMerchantKeys;
          io.out(`merchant keys: ${merchantKeks.card} card, ${merchantKeks.cvv} cvv records`);
          for (const [kid, n] of Object.entries(usage.merchantKeksByKeyId)) io.out(`merchant keys wrapped under ${kid}: ${n}`);
          if (usage.unreadable > 0) io.out(`unreadable: ${usage.unreadable}`);
          if (usage.fingerprintKeyKekId !== null) io.out(`fingerprint key: wrapped under ${usage.fingerprintKeyKekId}`);
          for (const [kid, n] of Object.entries(caUsage.byKeyId)) io.out(`forward-proxy CA keys: ${n} wrapped under ${kid}`);
          if (caUsage.unreadable > 0) io.out(`forward-proxy CA keys unreadable: ${caUsage.unreadable}`);
        }
        return 0;
      }
      const result = await rewrapAll(store, ring, {
        batchSize,
        restart: parsed.values.restart,
        maxBatches: parsed.values['max-batches'] === undefined ? undefined : positiveInt(parsed.values['max-batches'], 'max-batches', 1),
        onProgress: (c) => io.err(describeProgress(c)),
        merchantKeys: merchantKeys(store, ring),
      });
      // A handful of keys, one per merchant: re-wrapped in full on every run, stopped early or not.
      const caKeyStats = await rewrapCaKeys(caKeys.cas, ring);
      io.out(
        JSON.stringify({
          done: result.done,
          targetKeyId: result.checkpoint.targetKeyId,
          ...result.checkpoint.stats,
          fingerprintKey: result.fingerprintKey,
          caKeys: caKeyStats,
        }),
      );
      if (result.fingerprintKey === 'failed') io.err('the fingerprint key could not be opened (unknown key id or failed authentication)');
      if (caKeyStats.failed > 0)
        io.err(`${caKeyStats.failed} forward-proxy CA keys could not be opened (unknown key id or failed authentication)`);
      if (result.checkpoint.stats.failed > 0 || result.fingerprintKey === 'failed' || caKeyStats.failed > 0) {
        io.err('some records could not be opened (unknown key id or failed authentication); they were left unchanged');
        return 1;
      }
      return 0;
    } finally {
      await store.close();
      await caKeys.close();
      keys.close();
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
    if (err instanceof HsmError) {
      io.err(`[vault] the HSM cannot be used: ${err.message}`);
      return 1;
    }
    io.err(`failed: ${(err as Error).message}`);
    return 1;
  }
}

/** The card store's merchant KEKs, when it keeps them (RedisCardStore does). */
function merchantKekStoreOf(store: CardStore): MerchantKekStore | undefined {
  const candidate = store as Partial<MerchantKekStore>;
  return typeof candidate.getMerchantKek === 'function' && typeof candidate.scanMerchantKeks === 'function'
    ? (store as CardStore & MerchantKekStore)
    : undefined;
}

function merchantKeys(store: CardStore, root: KeyRing): { rings: MerchantKeyRings; store: MerchantKekStore } | undefined {
  const keks = merchantKekStoreOf(store);
  return keks === undefined ? undefined : { rings: new MerchantKeyRings({ root, store: keks }), store: keks };
}

async function openRedisStore(config: VaultConfig): Promise<CardStore> {
  const store = RedisCardStore.connect(redisTargetOf(config), {
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    logger: createLogger('vault-cli', 'silent'),
  });
  if (!(await store.waitUntilReady(5000))) {
    await store.close();
    throw new Error('Redis is not reachable');
  }
  return store;
}

async function openRedisCaKeys(config: VaultConfig): Promise<{ cas: CaKeyStore; close(): Promise<void> }> {
  const redis = connectRedis(redisTargetOf(config), config.REDIS_COMMAND_TIMEOUT_MS);
  // A down Redis is reported by the card store's open; this connection only stays quiet about it.
  redis.on('error', () => undefined);
  // Commands fail fast until the connection is ready (no offline queue): wait for it, as for the card store.
  if (redis.status !== 'ready') {
    await Promise.race([
      new Promise<void>((resolve) => redis.once('ready', () => resolve())),
      new Promise<void>((resolve) => setTimeout(resolve, 5000).unref()),
    ]);
  }
  return {
    cas: new RedisCaKeyStore(redis, config.VAULT_WRITE_ACK, createLogger('vault-cli', 'silent')),
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

// Beside npm start, with no Redis named: the stack it runs (.tessera/vault/stack.json).
if (require.main === module) runCliMain(run, withLocalStack('vault', process.env));
