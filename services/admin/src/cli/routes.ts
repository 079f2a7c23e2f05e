#!/usr/bin/env node
/**
 * `npm run routes`: the merchants' proxy routes (docs/routes.md) as code. `apply` a YAML or JSON file
 * (validated whole first, then each route created or replaced, with what changed), `list`, `show`,
 * `delete`, and `dry-run` a sample request. The use cases of app/proxyRoutes.ts, which the admin API
 * calls too; each change is written to the dashboard's audit log.
 * Exit codes: 0 done, 1 failed (unknown route, Redis unreachable), 2 usage or an invalid file, 78 bad configuration.
 */
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { RedisAuditLog } from '@tessera/merchant-data';
import {
  parseCommandLine,
  parseSubcommandLine,
  reportUsageError,
  runCliMain,
  UsageError,
  withLocalStack,
  type CliIo,
} from '@tessera/common';
import {
  parseRouteFile,
  RedisRouteStore,
  RouteDocumentError,
  ROUTE_ID_PATTERN,
  type RouteDocument,
  type DryRunResult,
} from '@tessera/routes';
import {
  applyProxyRoute,
  changedFields,
  deleteProxyRoute,
  dryRunProxyRoute,
  getProxyRoute,
  listProxyRoutes,
  type ProxyRouteDeps,
} from '../app/proxyRoutes';
import { asCommand, cliCaller, merchantFlag, runWithCliRedis } from './cliCommand';
import { connectCliRedis } from './cliRedis';

const USAGE = `Usage: npm run routes -- <command> [options]

Commands:
  apply --merchant <id> --file <routes.yaml|routes.json> [--dry]
      Validates every route in the file (nothing is applied when one is invalid), shows what changes, and
      creates or replaces each route by its id. --dry shows the changes only. Other routes are left as they are.
  list --merchant <id> [--json]
  show --merchant <id> --route <route id> [--json]
      The stored document, as YAML (or JSON).
  delete --merchant <id> --route <route id>
  dry-run --merchant <id> --route <route id> --file <sample body> [--content-type <type>]
      What the sample request becomes on the route: placeholder aliases, card data masked; nothing is sent or
      stored. The content type defaults from the file's extension (.json: application/json, .form: a form,
      anything else: text/plain).

Environment: as for npm run keys (REDIS_URL; beside npm start none). Route documents: docs/routes.md.`;

const OPTIONS = {
  merchant: { type: 'string' },
  file: { type: 'string' },
  route: { type: 'string' },
  'content-type': { type: 'string' },
  dry: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Parsed = Extract<ReturnType<typeof parseCommandLine<typeof OPTIONS>>, { ok: true }>['args'];

interface Plan {
  command: 'apply' | 'list' | 'show' | 'delete' | 'dry-run';
  merchantId: string;
  routes?: RouteDocument[];
  routeId?: string;
  sample?: { contentType: string; body: string };
}

function readFileFlag(file: string | undefined, command: string): string {
  if (file === undefined) throw new UsageError(`${command} needs --file <path>`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
}

function routeFlag(route: string | undefined, command: string): string {
  if (route === undefined) throw new UsageError(`${command} needs --route <route id> (see list)`);
  if (!ROUTE_ID_PATTERN.test(route)) throw new UsageError('--route must be 1-64 lower-case letters, digits, "_" or "-"');
  return route;
}

function contentTypeFor(file: string, given: string | undefined): string {
  if (given !== undefined) return given;
  const extension = path.extname(file).toLowerCase();
  if (extension === '.json') return 'application/json';
  if (extension === '.form') return 'application/x-www-form-urlencoded';
  return 'text/plain';
}

/** Checks every argument, and the whole file, before anything touches Redis. */
function plan(args: Parsed): Plan {
  const command = args.positionals[0] as Plan['command'];
  if (args.positionals.length > 1) throw new UsageError(`${command} takes no positional arguments`);
  const merchantId = merchantFlag(args.values.merchant, command);
  if (command === 'apply') {
    const text = readFileFlag(args.values.file, 'apply');
    try {
      return { command, merchantId, routes: parseRouteFile(text) };
    } catch (err) {
      if (err instanceof RouteDocumentError) throw new UsageError(`${args.values.file}: ${err.message}`);
      throw err;
    }
  }
  if (command === 'list') return { command, merchantId };
  const routeId = routeFlag(args.values.route, command);
  if (command === 'dry-run') {
    const file = args.values.file;
    const body = readFileFlag(file, 'dry-run');
    return { command, merchantId, routeId, sample: { contentType: contentTypeFor(file ?? '', args.values['content-type']), body } };
  }
  return { command, merchantId, routeId };
}

const compact = (value: unknown): string => (value === undefined ? '(none)' : JSON.stringify(value));

async function apply(deps: ProxyRouteDeps, p: Plan, dry: boolean, io: CliIo): Promise<void> {
  for (const route of p.routes ?? []) {
    const before = (await deps.routes.get(p.merchantId, route.id))?.route;
    const changed = changedFields(before, route);
    if (dry) {
      io.out(
        before === undefined ? `would create ${route.id}` : changed.length === 0 ? `${route.id} unchanged` : `would update ${route.id}`,
      );
    } else {
      const applied = await asCommand(() => applyProxyRoute(deps, cliCaller(), p.merchantId, route), route.id);
      io.out(applied.outcome === 'unchanged' ? `${route.id} unchanged` : `${applied.outcome} ${route.id}`);
    }
    for (const field of changed) {
      io.out(`  - ${field}: ${compact(before?.[field as keyof RouteDocument])}`);
      io.out(`  + ${field}: ${compact(route[field as keyof RouteDocument])}`);
    }
  }
  if (!dry) io.out(`Applied to merchant ${p.merchantId}; the routes run from the next request.`);
}

async function list(deps: ProxyRouteDeps, p: Plan, json: boolean, io: CliIo): Promise<void> {
  const routes = await listProxyRoutes(deps, cliCaller(), p.merchantId);
  if (json) {
    io.out(JSON.stringify(routes));
    return;
  }
  if (routes.length === 0) {
    io.out(`No routes for ${p.merchantId}.`);
    return;
  }
  for (const { route, updatedAt } of routes) {
    const where =
      route.kind === 'inbound'
        ? `${route.inbound?.path ?? route.inbound?.host} -> ${route.inbound?.upstream}`
        : (route.outbound?.hosts.join(', ') ?? '');
    io.out(`${route.id}  ${route.kind} ${route.mode}  ${where}  ${route.filters.length} filter(s)  updated ${updatedAt}`);
  }
}

function printDryRun(result: DryRunResult, io: CliIo): void {
  io.out(
    `${result.routeId} (${result.kind}): ${result.outcome}${result.unmatchedCardData > 0 ? `, ${result.unmatchedCardData} unmatched card number(s)` : ''}`,
  );
  for (const place of result.places) io.out(`  filter ${place.filterIndex} ${place.store}: ${place.value} -> ${place.becomes}`);
  io.out('');
  io.out(result.body);
}

export async function runRoutesCli(argv: string[], environment: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const parsed = parseSubcommandLine(argv, OPTIONS, USAGE, io, ['apply', 'list', 'show', 'delete', 'dry-run']);
  if (!parsed.ok) return parsed.exitCode;
  const { args } = parsed;
  let p: Plan;
  try {
    p = plan(args);
  } catch (err) {
    return reportUsageError(err, USAGE, io);
  }
  const json = args.values.json ?? false;
  return runWithCliRedis(
    environment,
    io,
    "Routes live in the gateway's Redis: point REDIS_URL at the same value the admin service uses.",
    async ({ config, redis }) => {
      await connectCliRedis(redis);
      const deps: ProxyRouteDeps = {
        routes: new RedisRouteStore(redis),
        audit: new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES),
        now: () => new Date(),
      };
      const routeId = p.routeId ?? '';
      if (p.command === 'apply') await apply(deps, p, args.values.dry ?? false, io);
      else if (p.command === 'list') await list(deps, p, json, io);
      else if (p.command === 'show') {
        const stored = await asCommand(() => getProxyRoute(deps, cliCaller(), p.merchantId, routeId), routeId);
        io.out(json ? JSON.stringify(stored) : stringify(stored.route).trimEnd());
      } else if (p.command === 'delete') {
        await asCommand(() => deleteProxyRoute(deps, cliCaller(), p.merchantId, routeId), routeId);
        io.out(`Deleted ${routeId} of merchant ${p.merchantId}; it is gone from the next request.`);
      } else {
        const result = await asCommand(() => dryRunProxyRoute(deps, cliCaller(), p.merchantId, routeId, p.sample!), routeId);
        if (json) io.out(JSON.stringify(result));
        else printDryRun(result, io);
      }
    },
  );
}

// Beside npm start, with no Redis named: the stack it runs (.tessera/admin/stack.json).
if (require.main === module) runCliMain(runRoutesCli, withLocalStack('admin', process.env));
