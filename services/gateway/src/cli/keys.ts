#!/usr/bin/env node
/**
 * Manages API keys in the shared Redis store: `create`, `list`, `restrict`, `revoke` (each change is
 * written to the dashboard's audit log), and dashboard operators (`admin ...`, see admin.ts).
 * Exit codes: 0 done, 1 failed (unknown key, Redis unreachable), 2 usage, 78 bad configuration.
 */
import { parseArgs } from 'node:util';
import os from 'node:os';
import { reportUsageError, UsageError, type CliIo } from '@tessera/common';
import { resolveApiKeyPepper } from '../config';
import { apiKeyStatus, isValidMerchantId, issueApiKey, pepperIdOf, type ApiKeyRecord, type KeyMode, type Pepper } from '../domain/apiKeys';
import { RedisApiKeyStore } from '../store/redisApiKeyStore';
import { buildAuditRecord, type AuditInput } from '../domain/admin/audit';
import { canonicalCidrEntry, canonicalDomainPattern } from '../domain/keyRestrictions';
import type { AuditLog } from '../store/adminStores';
import { RedisAuditLog } from '../store/redisAdminStores';
import { RedisMerchantSettingsStore, type MerchantSettingsStore } from '../store/merchantSettingsStore';
import { canonicalPspHostEntry, MAX_PSP_HOSTS } from '../domain/pspHosts';
import { readAllStdin, runAdminCli } from './admin';
import { CommandError, connectCliRedis, openCliRedis, reportCommandFailure } from './cliRedis';

const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  create --merchant <id> --mode test|live [--allow-ip <cidr>]... [--allow-domain <host>]... [--json]
      Creates a key and prints it ONCE. Store it now: only a keyed hash is kept.
      --allow-ip may be repeated (IPv4 or IPv6 address or CIDR); without it the key works from any IP.
      --allow-domain may be repeated (shop.example.com, *.example.com): browser pages (Origin) the key may be used from.
  restrict <key id> [--allow-ip <cidr>]... [--any-ip] [--allow-domain <host>]... [--any-domain]
      Replaces a key's IP and/or domain allowlist (a list not named keeps its entries); applies from the next request.
  list [--merchant <id>] [--json]
      Lists keys (prefix and last 4 characters only, never the key).
  revoke <key id> [--after <duration>]
      Revokes a key; requests with it fail from the next request on.
      --after 24h (s, m, h or d) schedules it instead, for an overlapping rotation: old and new key
      both work until then. A later call can only bring the time forward.

  psp-hosts set --merchant <id> <host>...
      Sets the merchant's PSP host allowlist (api.stripe.com, '*.adyen.com', 203.0.113.7): /v1/proxy
      refuses any other host with 400 psp_destination_forbidden, from the next request on.
  psp-hosts show --merchant <id> [--json]
  psp-hosts clear --merchant <id>
      Empties the list: any public host is allowed again.

  rehash-status [--json]
      Counts usable keys per API-key pepper (API_KEY_PEPPERS): keys on an older pepper move to the
      newest on their next use; drop an old pepper once it counts zero (and "unrecorded" is zero).

  admin <command> ...
      Dashboard operators: create, set-password, disable, enable, list (\`admin help\`).

Environment: REDIS_URL (required), API_KEY_PEPPER or API_KEY_PEPPERS (same value as the gateway), TESSERA_STATE_DIR.`;

type Io = CliIo;

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      merchant: { type: 'string' },
      mode: { type: 'string' },
      'allow-ip': { type: 'string', multiple: true },
      'allow-domain': { type: 'string', multiple: true },
      'any-ip': { type: 'boolean', default: false },
      'any-domain': { type: 'boolean', default: false },
      after: { type: 'string' },
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
    allowedDomains: record.allowedDomains ?? [],
    createdAt: record.createdAt,
    revokedAt: record.revokedAt ?? null,
    expiresAt: record.expiresAt ?? null,
    lastUsedAt: record.lastUsedAt ?? null,
    lastUsedIp: record.lastUsedIp ?? null,
  };
}

interface CreatePlan {
  merchantId: string;
  mode: KeyMode;
  allowedCidrs: string[];
  allowedDomains: string[];
  json: boolean;
}

/** Checks every argument before anything touches Redis. */
function planCreate(args: Parsed): CreatePlan {
  const { merchant, mode, json } = args.values;
  if (args.positionals.length > 1) throw new UsageError('create takes no positional arguments');
  if (merchant === undefined) throw new UsageError('create needs --merchant <id>');
  if (!isValidMerchantId(merchant)) throw new UsageError('--merchant must be 1-64 letters, digits, "_", "." or "-"');
  if (mode !== 'test' && mode !== 'live') throw new UsageError('create needs --mode test or --mode live');
  const allowedCidrs = cidrsFrom(args) ?? [];
  const allowedDomains = domainsFrom(args) ?? [];
  return { merchantId: merchant, mode, allowedCidrs, allowedDomains, json: json ?? false };
}

/** --allow-ip values, canonical and de-duplicated; undefined when none was given. */
function cidrsFrom(args: Parsed): string[] | undefined {
  const raws = args.values['allow-ip'];
  if (raws === undefined) return undefined;
  const out: string[] = [];
  for (const raw of raws) {
    const result = canonicalCidrEntry(raw);
    if (!result.ok) throw new UsageError(`--allow-ip "${raw}" ${result.message}`);
    if (!out.includes(result.value)) out.push(result.value);
  }
  return out;
}

function domainsFrom(args: Parsed): string[] | undefined {
  const raws = args.values['allow-domain'];
  if (raws === undefined) return undefined;
  const out: string[] = [];
  for (const raw of raws) {
    const result = canonicalDomainPattern(raw);
    if (!result.ok) throw new UsageError(`--allow-domain "${raw}" ${result.message}`);
    if (!out.includes(result.value)) out.push(result.value);
  }
  return out;
}

interface PspHostsPlan {
  action: 'set' | 'show' | 'clear';
  merchantId: string;
  /** Canonical, de-duplicated; only for set. */
  hosts: string[];
  json: boolean;
}

function planPspHosts(args: Parsed): PspHostsPlan {
  const action = args.positionals[1];
  if (action !== 'set' && action !== 'show' && action !== 'clear') throw new UsageError('psp-hosts needs set, show or clear');
  const merchant = args.values.merchant;
  if (merchant === undefined) throw new UsageError(`psp-hosts ${action} needs --merchant <id>`);
  if (!isValidMerchantId(merchant)) throw new UsageError('--merchant must be 1-64 letters, digits, "_", "." or "-"');
  const raws = args.positionals.slice(2);
  if (action !== 'set' && raws.length > 0) throw new UsageError(`psp-hosts ${action} takes no hosts`);
  if (action === 'set' && raws.length === 0) throw new UsageError('psp-hosts set needs at least one host (use clear to allow any host)');
  if (raws.length > MAX_PSP_HOSTS) throw new UsageError(`at most ${MAX_PSP_HOSTS} PSP hosts`);
  const hosts: string[] = [];
  for (const raw of raws) {
    const result = canonicalPspHostEntry(raw);
    if (!result.ok) throw new UsageError(`PSP host "${raw}" ${result.message}`);
    if (!hosts.includes(result.value)) hosts.push(result.value);
  }
  return { action, merchantId: merchant, hosts, json: args.values.json ?? false };
}

async function pspHosts(store: MerchantSettingsStore, audit: AuditLog, plan: PspHostsPlan, io: Io): Promise<void> {
  const before = (await store.get(plan.merchantId))?.pspHosts ?? [];
  if (plan.action === 'show') {
    if (plan.json) io.out(JSON.stringify({ merchantId: plan.merchantId, pspHosts: before }));
    else io.out(`PSP hosts for ${plan.merchantId}: ${before.length > 0 ? before.join(', ') : 'any public host'}`);
    return;
  }
  const settings = await store.setPspHosts(plan.merchantId, plan.hosts, new Date());
  await auditCli(audit, {
    action: 'merchant.psp_hosts_updated',
    merchantId: plan.merchantId,
    details: { pspHosts: settings.pspHosts, previousPspHosts: before },
  });
  io.out(
    settings.pspHosts.length > 0
      ? `PSP hosts for ${plan.merchantId}: ${settings.pspHosts.join(', ')}. Other hosts are refused from the next request on.`
      : `PSP host allowlist for ${plan.merchantId} cleared: any public host is allowed.`,
  );
}

interface RestrictPlan {
  id: string;
  allowedCidrs?: string[];
  allowedDomains?: string[];
}

function planRestrict(args: Parsed): RestrictPlan {
  const id = args.positionals[1];
  if (id === undefined || args.positionals.length > 2) throw new UsageError('restrict needs exactly one key id (see `list`)');
  const cidrs = cidrsFrom(args);
  const domains = domainsFrom(args);
  if (cidrs !== undefined && args.values['any-ip']) throw new UsageError('use either --allow-ip or --any-ip');
  if (domains !== undefined && args.values['any-domain']) throw new UsageError('use either --allow-domain or --any-domain');
  const plan: RestrictPlan = { id };
  if (cidrs !== undefined || args.values['any-ip']) plan.allowedCidrs = cidrs ?? [];
  if (domains !== undefined || args.values['any-domain']) plan.allowedDomains = domains ?? [];
  if (plan.allowedCidrs === undefined && plan.allowedDomains === undefined) {
    throw new UsageError('restrict needs --allow-ip, --any-ip, --allow-domain or --any-domain');
  }
  return plan;
}

/** CLI changes go to the dashboard's audit log too, attributed to the OS user who ran the command. */
function cliActor(): { id: string; email: string } {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry (some containers): keep "unknown".
  }
  return { id: 'cli', email: `cli:${user}` };
}

async function auditCli(audit: AuditLog, input: Omit<AuditInput, 'now' | 'ip' | 'actor'>): Promise<void> {
  await audit.append(buildAuditRecord({ ...input, actor: cliActor(), ip: undefined, now: new Date() }));
}

async function restrict(store: RedisApiKeyStore, audit: AuditLog, plan: RestrictPlan, io: Io): Promise<void> {
  const before = await store.get(plan.id);
  if (!before) throw new CommandError(`no API key with id ${plan.id}`);
  if (before.revokedAt !== undefined) throw new CommandError(`${plan.id} is revoked; its restrictions can no longer change`);
  const allowedCidrs = plan.allowedCidrs ?? before.allowedCidrs;
  const allowedDomains = plan.allowedDomains ?? before.allowedDomains ?? [];
  const record = await store.updateRestrictions(plan.id, { allowedCidrs, allowedDomains }, new Date());
  if (!record) throw new CommandError(`no API key with id ${plan.id}`);
  await auditCli(audit, {
    action: 'key.updated',
    merchantId: record.merchantId,
    keyId: record.id,
    details: {
      allowedCidrs,
      allowedDomains,
      previousAllowedCidrs: before.allowedCidrs,
      previousAllowedDomains: before.allowedDomains ?? [],
    },
  });
  io.out(`Updated ${record.id} (${record.prefix}...${record.last4}, merchant ${record.merchantId}); applies from the next request.`);
  io.out(`Allowed IPs: ${allowedCidrs.length > 0 ? allowedCidrs.join(', ') : 'any'}`);
  io.out(`Allowed domains: ${allowedDomains.length > 0 ? allowedDomains.join(', ') : 'any'}`);
}

async function create(store: RedisApiKeyStore, audit: AuditLog, pepper: string, plan: CreatePlan, io: Io): Promise<void> {
  const { merchantId, mode, allowedCidrs, allowedDomains, json } = plan;
  const { apiKey, record } = issueApiKey({ merchantId, mode, allowedCidrs, allowedDomains, pepper, now: new Date() });
  if (!(await store.create(record))) throw new CommandError('a key with the same digest already exists; run the command again');
  await auditCli(audit, { action: 'key.created', merchantId, keyId: record.id, details: { mode, allowedCidrs, allowedDomains } });

  if (json) {
    io.out(
      JSON.stringify({
        apiKey,
        id: record.id,
        merchantId: record.merchantId,
        mode: record.mode,
        allowedCidrs: record.allowedCidrs,
        allowedDomains: record.allowedDomains,
        createdAt: record.createdAt,
      }),
    );
    return;
  }
  io.out(`Created ${record.mode} key ${record.id} for merchant ${record.merchantId}.`);
  io.out(`Allowed IPs: ${allowedCidrs.length > 0 ? allowedCidrs.join(', ') : 'any'}`);
  if (allowedDomains.length > 0) io.out(`Allowed domains: ${allowedDomains.join(', ')}`);
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
      statusCell(r, new Date()),
      view.allowedCidrs.length > 0 ? view.allowedCidrs.join(',') : 'any',
      view.allowedDomains.length > 0 ? view.allowedDomains.join(',') : 'any',
      view.createdAt,
      r.lastUsedAt ? `${r.lastUsedAt} from ${r.lastUsedIp ?? '?'}` : 'never',
    ];
  });
  const header = ['ID', 'MERCHANT', 'MODE', 'KEY', 'STATUS', 'ALLOWED IPS', 'ALLOWED DOMAINS', 'CREATED', 'LAST USED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  for (const row of [header, ...rows])
    io.out(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
}

function statusCell(r: ApiKeyRecord, now: Date): string {
  const status = apiKeyStatus(r, now);
  if (status === 'revoked') return `revoked ${r.revokedAt}`;
  if (status === 'expired') return `expired ${r.expiresAt}`;
  return r.expiresAt === undefined ? 'active' : `active, expires ${r.expiresAt}`;
}

const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** A rotation longer than this is not a rotation: the old key should simply stay until revoked. */
const MAX_ROTATION_MS = 366 * 86_400_000;

/** `90s`, `30m`, `24h`, `7d` in milliseconds; undefined for anything else, zero, or more than a year. */
export function parseRotationDelay(text: string): number | undefined {
  const match = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
  return ms > 0 && ms <= MAX_ROTATION_MS ? ms : undefined;
}

interface RevokePlan {
  id: string;
  /** Schedule the expiry this far ahead instead of revoking now. */
  afterMs?: number;
}

function planRevoke(args: Parsed): RevokePlan {
  const id = args.positionals[1];
  if (id === undefined || args.positionals.length > 2) throw new UsageError('revoke needs exactly one key id (see `list`)');
  const after = args.values.after;
  if (after === undefined) return { id };
  const afterMs = parseRotationDelay(after);
  if (afterMs === undefined) throw new UsageError(`--after "${after}" must be a duration such as 30m, 24h or 7d (at most 366d)`);
  return { id, afterMs };
}

async function scheduleExpiry(store: RedisApiKeyStore, audit: AuditLog, id: string, afterMs: number, io: Io): Promise<void> {
  const before = await store.get(id);
  if (!before) throw new CommandError(`no API key with id ${id}`);
  if (before.revokedAt !== undefined) throw new CommandError(`${id} is already revoked (at ${before.revokedAt})`);
  const wanted = new Date(Date.now() + afterMs);
  const record = await store.scheduleExpiry(id, wanted);
  if (!record) throw new CommandError(`no API key with id ${id}`);
  if (record.expiresAt !== wanted.toISOString()) {
    io.out(`${id} already expires earlier, at ${record.expiresAt}; unchanged.`);
    return;
  }
  await auditCli(audit, {
    action: 'key.expiry_scheduled',
    merchantId: record.merchantId,
    keyId: record.id,
    details: { expiresAt: record.expiresAt },
  });
  io.out(`${id} (${record.prefix}...${record.last4}, merchant ${record.merchantId}) works until ${record.expiresAt}, then it is refused.`);
  io.out('Move every client to the new key before then; `revoke` without --after ends it at once.');
}

async function revoke(store: RedisApiKeyStore, audit: AuditLog, plan: RevokePlan, io: Io): Promise<void> {
  const id = plan.id;
  if (plan.afterMs !== undefined) return scheduleExpiry(store, audit, id, plan.afterMs, io);
  const before = await store.get(id);
  if (!before) throw new CommandError(`no API key with id ${id}`);
  const record = await store.revoke(id, new Date());
  if (!record) throw new CommandError(`no API key with id ${id}`);
  if (before.revokedAt !== undefined) {
    io.out(`${id} was already revoked at ${before.revokedAt}.`);
    return;
  }
  await auditCli(audit, { action: 'key.revoked', merchantId: record.merchantId, keyId: record.id });
  io.out(`Revoked ${id} (${record.prefix}...${record.last4}, merchant ${record.merchantId}). It is refused from the next request on.`);
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
  if (!['create', 'list', 'revoke', 'restrict', 'psp-hosts', 'rehash-status'].includes(command)) {
    io.err(`Unknown command "${command}".\n\n${USAGE}`);
    return 2;
  }

  let plan: { create?: CreatePlan; revoke?: RevokePlan; restrict?: RestrictPlan; pspHosts?: PspHostsPlan } = {};
  try {
    if (command === 'create') plan = { create: planCreate(args) };
    else if (command === 'revoke') plan = { revoke: planRevoke(args) };
    else if (command === 'restrict') plan = { restrict: planRestrict(args) };
    else if (command === 'psp-hosts') plan = { pspHosts: planPspHosts(args) };
    else if (args.positionals.length > 1) throw new UsageError(`${command} takes no positional arguments`);
  } catch (err) {
    return reportUsageError(err, USAGE, io);
  }

  const opened = openCliRedis(
    environment,
    io,
    'Without Redis the gateway keeps API keys in memory inside its own process, ' +
      'where this CLI cannot reach them. Point REDIS_URL (and API_KEY_PEPPER) at the same values the gateway uses.',
  );
  if (!opened.ok) return opened.exitCode;
  const { config, redis } = opened;
  const { pepper, peppers, source } = resolveApiKeyPepper(config);
  if (source === 'dev-file') {
    io.err(
      `warning: API_KEY_PEPPER is not set; using the development pepper in ${config.TESSERA_STATE_DIR} (the gateway must use the same one).`,
    );
  }

  const store = new RedisApiKeyStore(redis);
  const audit = new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES);
  try {
    await connectCliRedis(redis);
    if (plan.create) await create(store, audit, pepper, plan.create, io);
    else if (plan.revoke) await revoke(store, audit, plan.revoke, io);
    else if (plan.restrict) await restrict(store, audit, plan.restrict, io);
    else if (plan.pspHosts) await pspHosts(new RedisMerchantSettingsStore(redis), audit, plan.pspHosts, io);
    else if (command === 'rehash-status') await rehashStatus(store, peppers, args.values.json ?? false, io);
    else await list(store, args, io);
    return 0;
  } catch (err) {
    return reportCommandFailure(err, io);
  } finally {
    await store.close();
  }
}

/**
 * Usable keys (not revoked or expired) per configured pepper, by the pepper id each record
 * carries. "unrecorded": keys made before records named their pepper and not used since; they
 * are on whichever pepper was configured when they were made.
 */
async function rehashStatus(store: RedisApiKeyStore, peppers: Pepper[], json: boolean, io: Io): Promise<void> {
  const now = new Date();
  const versionById = new Map(peppers.map((p) => [pepperIdOf(p.pepper), p.version]));
  const counts: Record<string, number> = Object.fromEntries(peppers.map((p) => [p.version, 0]));
  let unrecorded = 0;
  let unknown = 0;
  for (const record of await store.list()) {
    if (apiKeyStatus(record, now) !== 'active') continue;
    if (record.pepperId === undefined) unrecorded++;
    else {
      const version = versionById.get(record.pepperId);
      if (version === undefined) unknown++;
      else counts[version] = (counts[version] ?? 0) + 1;
    }
  }
  const current = peppers[peppers.length - 1]?.version;
  if (json) {
    io.out(JSON.stringify({ current, byVersion: counts, unrecorded, unknownPepper: unknown }));
    return;
  }
  for (const { version } of peppers) io.out(`${version}${version === current ? ' (current)' : ''}: ${counts[version] ?? 0} keys`);
  if (unrecorded > 0) io.out(`unrecorded (made before keys named their pepper, unused since): ${unrecorded} keys`);
  if (unknown > 0) io.out(`on a pepper that is no longer configured (these keys fail): ${unknown} keys`);
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
