#!/usr/bin/env node
/**
 * Manages API keys in the shared Redis store: `create`, `list`, `show`, `restrict`, `revoke` (the use
 * cases of app/apiKeys.ts, which the admin API calls too; each change is written to the dashboard's
 * audit log), and dashboard operators (`admin ...`, see admin.ts).
 * Exit codes: 0 done, 1 failed (unknown key, Redis unreachable), 2 usage, 78 bad configuration.
 */
import {
  type ApiKeyRecord,
  apiKeyStatus,
  keyKindOf,
  type Pepper,
  pepperIdOf,
  RedisApiKeyStore,
  RedisEventStore,
  RedisAuditLog,
  RedisMerchantSettingsStore,
} from '@tessera/merchant-data';
import {
  parseCommandLine,
  parseSubcommandLine,
  reportUsageError,
  runCliMain,
  TesseraError,
  UsageError,
  withLocalStack,
  type CliIo,
} from '@tessera/common';
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  parseCreateKeyInput,
  parseRestrictionChanges,
  parseRotationDelay,
  restrictApiKey,
  revokeApiKey,
  scheduleApiKeyRevocation,
  type ApiKeyDeps,
  type CreateKeyInput,
  type FieldLabels,
  type RestrictionChanges,
} from '../app/apiKeys';
import { parseInput, publicOrigin } from '@tessera/edge';
import { pagePolicyFor } from '../app/pageInventory';
import { readTesseraJsIntegrity } from '../adminSetup';
import { getPspHosts, pspHostsSchema, setPspHosts, type PspHostDeps } from '../app/merchants';
import { getReturnUrls, parseReturnUrls, setReturnUrls, showFormSigningSecret, type ReturnUrlDeps } from '../app/returnUrls';
import { readAllStdin, runAdminCli } from './admin';
import { asCommand, cliCaller, cliPepper, merchantFlag, runWithCliRedis } from './cliCommand';
import { CommandError, connectCliRedis } from './cliRedis';

export { parseRotationDelay };

const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  create --merchant <id> --mode test|live [--allow-ip <cidr>]... [--allow-domain <host>]... [--json]
      Creates a secret key (tsk_...) and prints it ONCE. Store it now: only a keyed hash is kept.
      --allow-ip may be repeated (IPv4 or IPv6 address or CIDR); without it the key works from any IP.
      --allow-domain may be repeated (shop.example.com, *.example.com): browser pages (Origin) the key may be used from.
  create --kind publishable --merchant <id> --mode test|live --origin <origin>... [--json]
      Creates a publishable key (tpk_...) for browser card collection: refused (403) on every server route.
      --origin is required and may be repeated: exact origins (https://shop.example, https://*.shop.example:8443;
      live keys https only). IP and domain restrictions do not apply to publishable keys.
  restrict <key id> [--allow-ip <cidr>]... [--any-ip] [--allow-domain <host>]... [--any-domain] [--origin <origin>]...
      Replaces a key's IP, domain or (publishable keys) origin list (a list not named keeps its entries);
      applies from the next request.
  list [--merchant <id>] [--json]
      Lists keys (prefix and last 4 characters only, never the key).
  show <key id> [--json]
      One key, as list shows it.
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
  return-urls set --merchant <id> <url>...
      Registers the hosted payment page's return and cancel URLs (https://shop.example/checkout/done): a form
      session's returnUrl / cancelUrl must match one exactly (scheme, host, port, path; it may add a query).
      Replaces the list.
  return-urls show --merchant <id> [--json]
  return-urls clear --merchant <id>
  return-urls secret --merchant <id> --mode test|live [--json]
      Prints the secret that signs the hosted page's redirects, for the merchant's server to verify them.

  page-policy --merchant <id> --mode test|live [--key tpk_...] [--fields-origin <origin>] [--json]
      Prints what the merchant's payment page (the page with the card fields) should send: a
      Content-Security-Policy with a nonce placeholder, Reporting-Endpoints, and the tessera.js line with its
      SRI integrity (docs/browser.md, SAQ A kit). --key names the publishable key in the report URL;
      --fields-origin defaults to FIELDS_ORIGIN (npm start writes it to stack.json). Needs no Redis.

  admin <command> ...
      Dashboard operators: create, set-password, disable, enable, mfa reset, list (\`admin help\`).

Environment: the admin service's: REDIS_URL, API_KEY_PEPPER or API_KEY_PEPPERS (same value as the gateway), NODE_ENV,
TESSERA_STATE_DIR. Beside npm start none: without REDIS_URL it reads what npm start wrote in .tessera/admin/stack.json
(or stack.json in TESSERA_STATE_DIR).`;

type Io = CliIo;

const OPTIONS = {
  merchant: { type: 'string' },
  mode: { type: 'string' },
  kind: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'allow-ip': { type: 'string', multiple: true },
  'allow-domain': { type: 'string', multiple: true },
  'any-ip': { type: 'boolean', default: false },
  'any-domain': { type: 'boolean', default: false },
  after: { type: 'string' },
  key: { type: 'string' },
  'fields-origin': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Parsed = Extract<ReturnType<typeof parseCommandLine<typeof OPTIONS>>, { ok: true }>['args'];

function publicView(record: ApiKeyRecord) {
  return {
    id: record.id,
    merchantId: record.merchantId,
    mode: record.mode,
    kind: keyKindOf(record),
    key: `${record.prefix}...${record.last4}`,
    allowedCidrs: record.allowedCidrs,
    allowedDomains: record.allowedDomains ?? [],
    allowedOrigins: record.allowedOrigins ?? [],
    createdAt: record.createdAt,
    revokedAt: record.revokedAt ?? null,
    expiresAt: record.expiresAt ?? null,
    lastUsedAt: record.lastUsedAt ?? null,
    lastUsedIp: record.lastUsedIp ?? null,
  };
}

/** A bad list entry is named by the flag that carried it: `--allow-ip "10.0.0.0/33" is not …`. */
const FLAG_LABELS: FieldLabels = { allowedCidrs: '--allow-ip', allowedDomains: '--allow-domain', allowedOrigins: '--origin' };

/** The use cases' input checks, before anything touches Redis: a refusal is a usage error (exit 2). */
function asUsage<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof TesseraError && err.status === 400) throw new UsageError(err.message);
    throw err;
  }
}

function listFlags(args: Parsed) {
  return {
    allowedCidrs: args.values['allow-ip'],
    allowedDomains: args.values['allow-domain'],
    allowedOrigins: args.values.origin,
  };
}

/** Checks every argument before anything touches Redis. */
function planCreate(args: Parsed): CreateKeyInput & { json: boolean } {
  const { mode, kind, json } = args.values;
  if (args.positionals.length > 1) throw new UsageError('create takes no positional arguments');
  const merchant = merchantFlag(args.values.merchant, 'create');
  if (mode !== 'test' && mode !== 'live') throw new UsageError('create needs --mode test or --mode live');
  if (kind !== undefined && kind !== 'secret' && kind !== 'publishable') throw new UsageError('--kind must be secret or publishable');
  const input = asUsage(() => parseCreateKeyInput({ merchantId: merchant, mode, kind, ...listFlags(args) }, FLAG_LABELS));
  return { ...input, json: json ?? false };
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
  const merchant = merchantFlag(args.values.merchant, `psp-hosts ${action}`);
  const raws = args.positionals.slice(2);
  if (action !== 'set' && raws.length > 0) throw new UsageError(`psp-hosts ${action} takes no hosts`);
  if (action === 'set' && raws.length === 0) throw new UsageError('psp-hosts set needs at least one host (use clear to allow any host)');
  const hosts = action === 'set' ? asUsage(() => parseInput(pspHostsSchema('PSP host'), { pspHosts: raws }).pspHosts) : [];
  return { action, merchantId: merchant, hosts, json: args.values.json ?? false };
}

async function pspHosts(deps: PspHostDeps, plan: PspHostsPlan, io: Io): Promise<void> {
  if (plan.action === 'show') {
    const { pspHosts: shown } = await getPspHosts(deps, cliCaller(), plan.merchantId);
    if (plan.json) io.out(JSON.stringify({ merchantId: plan.merchantId, pspHosts: shown }));
    else io.out(`PSP hosts for ${plan.merchantId}: ${shown.length > 0 ? shown.join(', ') : 'any public host'}`);
    return;
  }
  const settings = await setPspHosts(deps, cliCaller(), plan.merchantId, plan.hosts);
  io.out(
    settings.pspHosts.length > 0
      ? `PSP hosts for ${plan.merchantId}: ${settings.pspHosts.join(', ')}. Other hosts are refused from the next request on.`
      : `PSP host allowlist for ${plan.merchantId} cleared: any public host is allowed.`,
  );
}

interface ReturnUrlsPlan {
  action: 'set' | 'show' | 'clear' | 'secret';
  merchantId: string;
  /** Canonical, de-duplicated; only for set. */
  urls: string[];
  mode: 'test' | 'live';
  json: boolean;
}

function planReturnUrls(args: Parsed): ReturnUrlsPlan {
  const action = args.positionals[1];
  if (action !== 'set' && action !== 'show' && action !== 'clear' && action !== 'secret') {
    throw new UsageError('return-urls needs set, show, clear or secret');
  }
  const merchant = merchantFlag(args.values.merchant, `return-urls ${action}`);
  const raws = args.positionals.slice(2);
  if (action !== 'set' && raws.length > 0) throw new UsageError(`return-urls ${action} takes no URLs`);
  if (action === 'set' && raws.length === 0) throw new UsageError('return-urls set needs at least one URL (use clear to remove them all)');
  const mode = args.values.mode;
  if (action === 'secret' && mode !== 'test' && mode !== 'live')
    throw new UsageError('return-urls secret needs --mode test or --mode live');
  const urls = action === 'set' ? asUsage(() => parseReturnUrls({ returnUrls: raws }, 'Return URL')) : [];
  return { action, merchantId: merchant, urls, mode: mode === 'live' ? 'live' : 'test', json: args.values.json ?? false };
}

async function returnUrls(deps: ReturnUrlDeps, plan: ReturnUrlsPlan, io: Io): Promise<void> {
  if (plan.action === 'secret') {
    const shown = await showFormSigningSecret(deps, cliCaller(), plan.merchantId, plan.mode);
    io.out(plan.json ? JSON.stringify(shown) : shown.signingSecret);
    return;
  }
  if (plan.action === 'show') {
    const view = await getReturnUrls(deps, cliCaller(), plan.merchantId);
    if (plan.json) io.out(JSON.stringify({ merchantId: view.merchantId, returnUrls: view.returnUrls }));
    else
      io.out(
        `Return URLs for ${plan.merchantId}: ${view.returnUrls.length > 0 ? view.returnUrls.join(', ') : 'none (form sessions are refused)'}`,
      );
    return;
  }
  const view = await setReturnUrls(deps, cliCaller(), plan.merchantId, plan.urls);
  io.out(
    view.returnUrls.length > 0
      ? `Return URLs for ${plan.merchantId}: ${view.returnUrls.join(', ')}. New form sessions must use one of them.`
      : `Return URLs for ${plan.merchantId} cleared: new form sessions are refused.`,
  );
}

interface RestrictPlan {
  id: string;
  changes: RestrictionChanges;
}

function planRestrict(args: Parsed): RestrictPlan {
  const id = args.positionals[1];
  if (id === undefined || args.positionals.length > 2) throw new UsageError('restrict needs exactly one key id (see `list`)');
  const parsed = asUsage(() => parseRestrictionChanges(listFlags(args), FLAG_LABELS));
  if (parsed.allowedCidrs !== undefined && args.values['any-ip']) throw new UsageError('use either --allow-ip or --any-ip');
  if (parsed.allowedDomains !== undefined && args.values['any-domain']) throw new UsageError('use either --allow-domain or --any-domain');
  const changes: RestrictionChanges = { ...parsed };
  if (args.values['any-ip']) changes.allowedCidrs = [];
  if (args.values['any-domain']) changes.allowedDomains = [];
  if (Object.keys(changes).length === 0) {
    throw new UsageError('restrict needs --allow-ip, --any-ip, --allow-domain, --any-domain or --origin');
  }
  return { id, changes };
}

/** A key use case's refusal as the CLI says it: an unknown id by name, anything else with its reason. */
async function commandFor<T>(id: string, run: () => Promise<T>): Promise<T> {
  return asCommand(async () => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof TesseraError && err.code === 'api_key_not_found') throw new CommandError(`no API key with id ${id}`);
      throw err;
    }
  }, id);
}

function listLine(label: string, entries: readonly string[]): string {
  return `${label}: ${entries.length > 0 ? entries.join(', ') : 'any'}`;
}

async function restrict(deps: ApiKeyDeps, plan: RestrictPlan, io: Io): Promise<void> {
  const { record } = await commandFor(plan.id, () => restrictApiKey(deps, cliCaller(), plan.id, plan.changes));
  io.out(`Updated ${record.id} (${record.prefix}...${record.last4}, merchant ${record.merchantId}); applies from the next request.`);
  if (keyKindOf(record) === 'publishable') {
    io.out(`Allowed origins: ${(record.allowedOrigins ?? []).join(', ')}`);
    return;
  }
  io.out(listLine('Allowed IPs', record.allowedCidrs));
  io.out(listLine('Allowed domains', record.allowedDomains ?? []));
}

async function create(deps: ApiKeyDeps, plan: CreateKeyInput & { json: boolean }, io: Io): Promise<void> {
  const { json, ...input } = plan;
  const { apiKey, record } = await createApiKey(deps, cliCaller(), input);
  const publishable = keyKindOf(record) === 'publishable';

  if (json) {
    io.out(
      JSON.stringify({
        apiKey,
        id: record.id,
        merchantId: record.merchantId,
        mode: record.mode,
        // Secret keys print the fields they always had, so scripts reading them keep working.
        ...(publishable ? { kind: 'publishable', allowedOrigins: record.allowedOrigins ?? [] } : {}),
        allowedCidrs: record.allowedCidrs,
        allowedDomains: record.allowedDomains,
        createdAt: record.createdAt,
      }),
    );
    return;
  }
  if (publishable) {
    io.out(`Created ${record.mode} publishable key ${record.id} for merchant ${record.merchantId}.`);
    io.out(`Allowed origins: ${(record.allowedOrigins ?? []).join(', ')}`);
    io.out('It works only for browser card collection from those origins; server routes answer it with 403.');
  } else {
    io.out(`Created ${record.mode} key ${record.id} for merchant ${record.merchantId}.`);
    io.out(listLine('Allowed IPs', record.allowedCidrs));
    if ((record.allowedDomains ?? []).length > 0) io.out(`Allowed domains: ${record.allowedDomains.join(', ')}`);
  }
  io.out('');
  io.out(`  ${apiKey}`);
  io.out('');
  io.out('This is the only time the key is shown. Store it in your secret manager now.');
}

async function list(deps: ApiKeyDeps, args: Parsed, io: Io): Promise<void> {
  const { merchant, json } = args.values;
  const records = await listApiKeys(deps, cliCaller(), merchant === undefined ? {} : { merchantId: merchant });
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
      view.kind,
      view.key,
      statusCell(r, new Date()),
      view.kind === 'publishable' ? 'n/a' : view.allowedCidrs.length > 0 ? view.allowedCidrs.join(',') : 'any',
      view.kind === 'publishable' ? view.allowedOrigins.join(',') : view.allowedDomains.length > 0 ? view.allowedDomains.join(',') : 'any',
      view.createdAt,
      r.lastUsedAt ? `${r.lastUsedAt} from ${r.lastUsedIp ?? '?'}` : 'never',
    ];
  });
  const header = ['ID', 'MERCHANT', 'MODE', 'KIND', 'KEY', 'STATUS', 'ALLOWED IPS', 'ALLOWED DOMAINS/ORIGINS', 'CREATED', 'LAST USED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  for (const row of [header, ...rows])
    io.out(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
}

async function show(deps: ApiKeyDeps, id: string, json: boolean, io: Io): Promise<void> {
  const record = await commandFor(id, () => getApiKey(deps, cliCaller(), id));
  const view = publicView(record);
  if (json) {
    io.out(JSON.stringify(view));
    return;
  }
  io.out(`${view.id}  ${view.key}  ${view.kind} ${view.mode} key of merchant ${view.merchantId}`);
  io.out(`Status: ${statusCell(record, new Date())}`);
  if (view.kind === 'publishable') io.out(`Allowed origins: ${view.allowedOrigins.join(', ')}`);
  else {
    io.out(listLine('Allowed IPs', view.allowedCidrs));
    io.out(listLine('Allowed domains', view.allowedDomains));
  }
  io.out(`Created: ${view.createdAt}`);
  io.out(`Last used: ${record.lastUsedAt ? `${record.lastUsedAt} from ${record.lastUsedIp ?? '?'}` : 'never'}`);
}

function statusCell(r: ApiKeyRecord, now: Date): string {
  const status = apiKeyStatus(r, now);
  if (status === 'revoked') return `revoked ${r.revokedAt}`;
  if (status === 'expired') return `expired ${r.expiresAt}`;
  return r.expiresAt === undefined ? 'active' : `active, expires ${r.expiresAt}`;
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

async function revoke(deps: ApiKeyDeps, plan: RevokePlan, io: Io): Promise<void> {
  const { id, afterMs } = plan;
  if (afterMs !== undefined) {
    const { record, scheduled } = await commandFor(id, () => scheduleApiKeyRevocation(deps, cliCaller(), id, afterMs));
    if (!scheduled) {
      io.out(`${id} already expires earlier, at ${record.expiresAt}; unchanged.`);
      return;
    }
    io.out(
      `${id} (${record.prefix}...${record.last4}, merchant ${record.merchantId}) works until ${record.expiresAt}, then it is refused.`,
    );
    io.out('Move every client to the new key before then; `revoke` without --after ends it at once.');
    return;
  }
  const { record, alreadyRevoked } = await commandFor(id, () => revokeApiKey(deps, cliCaller(), id));
  if (alreadyRevoked) {
    io.out(`${id} was already revoked at ${record.revokedAt}.`);
    return;
  }
  io.out(`Revoked ${id} (${record.prefix}...${record.last4}, merchant ${record.merchantId}). It is refused from the next request on.`);
}

export async function runKeysCli(argv: string[], environment: NodeJS.ProcessEnv, io: Io): Promise<number> {
  if (argv[0] === 'admin') return runAdminCli(argv.slice(1), environment, { readStdin: readAllStdin, ...io });
  const parsed = parseSubcommandLine(argv, OPTIONS, USAGE, io, [
    'create',
    'list',
    'show',
    'revoke',
    'restrict',
    'psp-hosts',
    'rehash-status',
    'return-urls',
    'page-policy',
  ]);
  if (!parsed.ok) return parsed.exitCode;
  const { args, command } = parsed;
  if (command === 'page-policy') {
    try {
      pagePolicy(args, environment, io);
      return 0;
    } catch (err) {
      return reportUsageError(err, USAGE, io);
    }
  }

  let plan: {
    create?: CreateKeyInput & { json: boolean };
    revoke?: RevokePlan;
    restrict?: RestrictPlan;
    show?: string;
    pspHosts?: PspHostsPlan;
    returnUrls?: ReturnUrlsPlan;
  } = {};
  try {
    if (command === 'create') plan = { create: planCreate(args) };
    else if (command === 'revoke') plan = { revoke: planRevoke(args) };
    else if (command === 'restrict') plan = { restrict: planRestrict(args) };
    else if (command === 'psp-hosts') plan = { pspHosts: planPspHosts(args) };
    else if (command === 'return-urls') plan = { returnUrls: planReturnUrls(args) };
    else if (command === 'show') {
      const id = args.positionals[1];
      if (id === undefined || args.positionals.length > 2) throw new UsageError('show needs exactly one key id (see `list`)');
      plan = { show: id };
    } else if (args.positionals.length > 1) throw new UsageError(`${command} takes no positional arguments`);
  } catch (err) {
    return reportUsageError(err, USAGE, io);
  }

  return runWithCliRedis(
    environment,
    io,
    "API keys live in the gateway's Redis: point REDIS_URL (and API_KEY_PEPPER) at the same values the gateway uses.",
    async ({ config, redis }) => {
      const { pepper, peppers } = cliPepper(config, io);
      const store = new RedisApiKeyStore(redis);
      const audit = new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES);
      const now = () => new Date();
      await connectCliRedis(redis);
      // The CLI's key changes are events like the dashboard's; one that cannot be recorded is said, not fatal.
      const events = {
        recorder: new RedisEventStore(redis),
        logger: { error: (_fields: Record<string, unknown>, message: string) => io.err(`warning: ${message}`) },
      };
      const deps: ApiKeyDeps = { keyStore: store, audit, pepper, now, events };
      if (plan.create) await create(deps, plan.create, io);
      else if (plan.revoke) await revoke(deps, plan.revoke, io);
      else if (plan.restrict) await restrict(deps, plan.restrict, io);
      else if (plan.show !== undefined) await show(deps, plan.show, args.values.json ?? false, io);
      else if (plan.pspHosts) await pspHosts({ merchantSettings: new RedisMerchantSettingsStore(redis), audit, now }, plan.pspHosts, io);
      else if (command === 'rehash-status') await rehashStatus(store, peppers, args.values.json ?? false, io);
      else if (plan.returnUrls) {
        await returnUrls({ merchantSettings: new RedisMerchantSettingsStore(redis), audit, pepper, now }, plan.returnUrls, io);
      } else await list(deps, args, io);
    },
  );
}

/**
 * `page-policy`: the SAQ A kit's recommended headers for the merchant's payment page (app/pageInventory.ts),
 * from the fields origin and the built tessera.js; no Redis.
 */
function pagePolicy(args: Parsed, environment: NodeJS.ProcessEnv, io: Io): void {
  const merchantId = merchantFlag(args.values.merchant, 'page-policy');
  const mode = args.values.mode;
  if (mode !== 'test' && mode !== 'live') throw new UsageError('page-policy needs --mode test or --mode live');
  const key = args.values.key;
  if (key !== undefined && !new RegExp(`^tpk_${mode}_[0-9A-Za-z]{38}$`).test(key)) {
    throw new UsageError(`--key must be a ${mode} publishable key (tpk_${mode}_...)`);
  }
  const rawOrigin = args.values['fields-origin'] ?? environment.FIELDS_ORIGIN;
  if (rawOrigin === undefined || rawOrigin === '') {
    throw new UsageError('page-policy needs --fields-origin <origin> (or FIELDS_ORIGIN): where tessera.js and the card fields are served');
  }
  const origin = publicOrigin.safeParse(rawOrigin);
  if (!origin.success) throw new UsageError('--fields-origin must be an origin: http(s)://host[:port], nothing after it');
  const policy = pagePolicyFor(
    { fieldsOrigin: origin.data, tesseraJsIntegrity: readTesseraJsIntegrity() },
    undefined,
    merchantId,
    mode,
    key,
  );
  if (args.values.json) {
    io.out(JSON.stringify(policy));
    return;
  }
  io.out(`# The payment page of ${merchantId} (${mode}): send these response headers`);
  for (const [name, value] of Object.entries(policy.headers)) io.out(`${name}: ${value}`);
  io.out('');
  io.out('# and load tessera.js with this line');
  io.out(policy.scriptTag);
  io.out('');
  for (const note of policy.notes) io.out(`# ${note}`);
}

/**
 * Usable keys (not revoked or expired) per configured pepper, by the pepper id each record
 * carries, secret and publishable alike (both move to the newest pepper on use); how many of them
 * are publishable is said too, as those are used only from shoppers' browsers and may take longer
 * to come by. "unrecorded": keys made before records named their pepper and not used since; they
 * are on whichever pepper was configured when they were made.
 */
async function rehashStatus(store: RedisApiKeyStore, peppers: Pepper[], json: boolean, io: Io): Promise<void> {
  const now = new Date();
  const versionById = new Map(peppers.map((p) => [pepperIdOf(p.pepper), p.version]));
  const counts: Record<string, number> = Object.fromEntries(peppers.map((p) => [p.version, 0]));
  const publishable: Record<string, number> = Object.fromEntries(peppers.map((p) => [p.version, 0]));
  let unrecorded = 0;
  let unknown = 0;
  for (const record of await store.list()) {
    if (apiKeyStatus(record, now) !== 'active') continue;
    const version = record.pepperId === undefined ? undefined : versionById.get(record.pepperId);
    if (record.pepperId === undefined) unrecorded++;
    else if (version === undefined) unknown++;
    else {
      counts[version] = (counts[version] ?? 0) + 1;
      if (keyKindOf(record) === 'publishable') publishable[version] = (publishable[version] ?? 0) + 1;
    }
  }
  const current = peppers[peppers.length - 1]?.version;
  if (json) {
    io.out(JSON.stringify({ current, byVersion: counts, publishableByVersion: publishable, unrecorded, unknownPepper: unknown }));
    return;
  }
  for (const { version } of peppers) {
    io.out(`${version}${version === current ? ' (current)' : ''}: ${counts[version] ?? 0} keys (${publishable[version] ?? 0} publishable)`);
  }
  if (unrecorded > 0) io.out(`unrecorded (made before keys named their pepper, unused since): ${unrecorded} keys`);
  if (unknown > 0) io.out(`on a pepper that is no longer configured (these keys fail): ${unknown} keys`);
}

// Beside npm start, with no Redis named: the stack it runs (.tessera/admin/stack.json).
if (require.main === module) runCliMain(runKeysCli, withLocalStack('admin', process.env));
