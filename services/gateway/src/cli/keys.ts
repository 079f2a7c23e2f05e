#!/usr/bin/env node
/**
 * Manages API keys in the shared Redis store: `create`, `list`, `revoke`.
 * Exit codes: 0 done, 1 failed (unknown key, Redis unreachable), 2 usage, 78 bad configuration.
 */
import { parseArgs } from 'node:util';
import { ConfigError, canonicalCidr } from '@tessera/common';
import { parseGatewayConfig, resolveApiKeyPepper, type GatewayConfig } from '../config';
import { isValidMerchantId, issueApiKey, type ApiKeyRecord, type KeyMode } from '../domain/apiKeys';
import { createRedisClient, RedisApiKeyStore } from '../store/redisApiKeyStore';
import { readAllStdin, runAdminCli } from './admin';

const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  create --merchant <id> --mode test|live [--allow-ip <cidr>]... [--json]
      Creates a key and prints it ONCE. Store it now: only a keyed hash is kept.
      --allow-ip may be repeated (IPv4 or IPv6 address or CIDR); without it the key works from any IP.
  list [--merchant <id>] [--json]
      Lists keys (prefix and last 4 characters only, never the key).
  revoke <key id>
      Revokes a key; requests with it fail from the next request on.

  admin <command> ...
      Dashboard operators: create, set-password, disable, enable, list (\`admin help\`).

Environment: REDIS_URL (required), API_KEY_PEPPER (same value as the gateway), TESSERA_STATE_DIR.`;

class UsageError extends Error {}
class CommandError extends Error {}

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      merchant: { type: 'string' },
      mode: { type: 'string' },
      'allow-ip': { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

type Parsed = ReturnType<typeof parse>;

function publicView(record: ApiKeyRecord) {
  return {
    id: record.id,
    merchantId: record.merchantId,
    mode: record.mode,
    key: `${record.prefix}...${record.last4}`,
    allowedCidrs: record.allowedCidrs,
    createdAt: record.createdAt,
    revokedAt: record.revokedAt ?? null,
    lastUsedAt: record.lastUsedAt ?? null,
    lastUsedIp: record.lastUsedIp ?? null,
  };
}

interface CreatePlan {
  merchantId: string;
  mode: KeyMode;
  allowedCidrs: string[];
  json: boolean;
}

/** Checks every argument before anything touches Redis. */
function planCreate(args: Parsed): CreatePlan {
  const { merchant, mode, json } = args.values;
  if (args.positionals.length > 1) throw new UsageError('create takes no positional arguments');
  if (merchant === undefined) throw new UsageError('create needs --merchant <id>');
  if (!isValidMerchantId(merchant)) throw new UsageError('--merchant must be 1-64 letters, digits, "_", "." or "-"');
  if (mode !== 'test' && mode !== 'live') throw new UsageError('create needs --mode test or --mode live');
  const allowedCidrs: string[] = [];
  for (const raw of args.values['allow-ip'] ?? []) {
    const cidr = canonicalCidr(raw);
    if (cidr === undefined) {
      throw new UsageError(
        `--allow-ip "${raw}" is not an IPv4/IPv6 address or CIDR (examples: 203.0.113.7, 203.0.113.0/24, 2001:db8::/32)`,
      );
    }
    if (!allowedCidrs.includes(cidr)) allowedCidrs.push(cidr);
  }
  return { merchantId: merchant, mode, allowedCidrs, json: json ?? false };
}

async function create(store: RedisApiKeyStore, pepper: string, plan: CreatePlan, io: Io): Promise<void> {
  const { merchantId, mode, allowedCidrs, json } = plan;
  const { apiKey, record } = issueApiKey({ merchantId, mode, allowedCidrs, pepper, now: new Date() });
  if (!(await store.create(record))) throw new CommandError('a key with the same digest already exists; run the command again');

  if (json) {
    io.out(
      JSON.stringify({
        apiKey,
        id: record.id,
        merchantId: record.merchantId,
        mode: record.mode,
        allowedCidrs: record.allowedCidrs,
        createdAt: record.createdAt,
      }),
    );
    return;
  }
  io.out(`Created ${record.mode} key ${record.id} for merchant ${record.merchantId}.`);
  io.out(`Allowed IPs: ${allowedCidrs.length > 0 ? allowedCidrs.join(', ') : 'any'}`);
  io.out('');
  io.out(`  ${apiKey}`);
  io.out('');
  io.out('This is the only time the key is shown. Store it in your secret manager now.');
}

async function list(store: RedisApiKeyStore, args: Parsed, io: Io): Promise<void> {
  const { merchant, json } = args.values;
  const records = (await store.list()).filter((r) => merchant === undefined || r.merchantId === merchant);
  if (json) {
    io.out(JSON.stringify(records.map(publicView)));
    return;
  }
  if (records.length === 0) {
    io.out('No API keys.');
    return;
  }
  const rows = records.map((r) => {
    const view = publicView(r);
    return [
      view.id,
      view.merchantId,
      view.mode,
      view.key,
      r.revokedAt ? `revoked ${r.revokedAt}` : 'active',
      view.allowedCidrs.length > 0 ? view.allowedCidrs.join(',') : 'any',
      view.createdAt,
      r.lastUsedAt ? `${r.lastUsedAt} from ${r.lastUsedIp ?? '?'}` : 'never',
    ];
  });
  const header = ['ID', 'MERCHANT', 'MODE', 'KEY', 'STATUS', 'ALLOWED IPS', 'CREATED', 'LAST USED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  for (const row of [header, ...rows])
    io.out(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
}

function planRevoke(args: Parsed): string {
  const id = args.positionals[1];
  if (id === undefined || args.positionals.length > 2) throw new UsageError('revoke needs exactly one key id (see `list`)');
  return id;
}

async function revoke(store: RedisApiKeyStore, id: string, io: Io): Promise<void> {
  const before = await store.get(id);
  if (!before) throw new CommandError(`no API key with id ${id}`);
  const record = await store.revoke(id, new Date());
  if (!record) throw new CommandError(`no API key with id ${id}`);
  if (before.revokedAt !== undefined) io.out(`${id} was already revoked at ${before.revokedAt}.`);
  else io.out(`Revoked ${id} (${record.prefix}...${record.last4}, merchant ${record.merchantId}). It is refused from the next request on.`);
}

export async function runKeysCli(argv: string[], environment: NodeJS.ProcessEnv, io: Io): Promise<number> {
  if (argv[0] === 'admin') return runAdminCli(argv.slice(1), environment, { readStdin: readAllStdin, ...io });
  let args: Parsed;
  try {
    args = parse(argv);
  } catch (err) {
    io.err(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  const command = args.positionals[0];
  if (args.values.help || command === undefined || command === 'help') {
    (command === undefined && !args.values.help ? io.err : io.out)(USAGE);
    return command === undefined && !args.values.help ? 2 : 0;
  }
  if (!['create', 'list', 'revoke'].includes(command)) {
    io.err(`Unknown command "${command}".\n\n${USAGE}`);
    return 2;
  }

  let plan: { create?: CreatePlan; revokeId?: string } = {};
  try {
    if (command === 'create') plan = { create: planCreate(args) };
    else if (command === 'revoke') plan = { revokeId: planRevoke(args) };
    else if (args.positionals.length > 1) throw new UsageError('list takes no positional arguments');
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`${err.message}\n\n${USAGE}`);
    return 2;
  }

  let config: GatewayConfig;
  try {
    config = parseGatewayConfig(environment);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(err.message);
      return 78;
    }
    throw err;
  }
  if (config.REDIS_URL === undefined) {
    io.err(
      'REDIS_URL is not set. Without Redis the gateway keeps API keys in memory inside its own process, ' +
        'where this CLI cannot reach them. Point REDIS_URL (and API_KEY_PEPPER) at the same values the gateway uses.',
    );
    return 2;
  }
  const { pepper, source } = resolveApiKeyPepper(config);
  if (source === 'dev-file') {
    io.err(
      `warning: API_KEY_PEPPER is not set; using the development pepper in ${config.TESSERA_STATE_DIR} (the gateway must use the same one).`,
    );
  }

  const redis = createRedisClient(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS, profile: 'cli' });
  redis.on('error', () => {
    // Reported once, below, through the failing command.
  });
  const store = new RedisApiKeyStore(redis);
  try {
    await redis.connect().catch(() => {
      throw new CommandError('cannot connect to Redis at REDIS_URL');
    });
    if (plan.create) await create(store, pepper, plan.create, io);
    else if (plan.revokeId !== undefined) await revoke(store, plan.revokeId, io);
    else await list(store, args, io);
    return 0;
  } catch (err) {
    if (err instanceof CommandError) {
      io.err(err.message);
      return 1;
    }
    io.err(`failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await store.close();
  }
}

if (require.main === module) {
  runKeysCli(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
  }).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
