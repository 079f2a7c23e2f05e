#!/usr/bin/env node
/**
 * Manages merchants' webhook endpoints in the shared Redis store, and shows and replays their
 * deliveries: the use cases of app/webhookEndpoints.ts, which the dashboard's admin API calls too;
 * each change is written to the dashboard's audit log as `cli:<os user>`.
 * Exit codes: 0 done, 1 failed (unknown endpoint, Redis unreachable), 2 usage, 78 bad configuration.
 */
import {
  maskCardNumbers,
  parseCommandLine,
  parseSubcommandLine,
  reportUsageError,
  runCliMain,
  TesseraError,
  UsageError,
  withLocalStack,
  type CliIo,
  type KeyMode,
} from '@tessera/common';
import {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  EVENT_ID_PATTERN,
  RedisAuditLog,
  RedisEventStore,
  RedisWebhookDeliveryStore,
  RedisWebhookEndpointStore,
  WEBHOOK_ENDPOINT_ID_PATTERN,
} from '@tessera/merchant-data';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  enableWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  MAX_DELIVERY_LIMIT,
  parseSecretOverlap,
  parseWebhookEndpointInput,
  resendWebhookEvent,
  rotateWebhookSecret,
  type CreateWebhookEndpointInput,
  type WebhookEndpointDeps,
  type WebhookEndpointView,
} from '../app/webhookEndpoints';
import { webhookDeliveriesOver, type WebhookDeliveryAttempt } from '../app/webhookDeliveriesPort';
import { asCommand, cliCaller, cliPepper, merchantFlag, runWithCliRedis } from './cliCommand';
import { CommandError, connectCliRedis } from './cliRedis';

const USAGE = `Usage: npm run webhooks -- <command> --merchant <id> --mode test|live [options]

Commands:
  list [--json]
      The merchant's webhook endpoints of that mode (never their secrets).
  create --url <url> --events <type>[,<type>...] [--json]
      Creates an endpoint and prints its signing secret (whsec_...) ONCE. --events takes event types
      (token.created,form_session.completed) or '*' for every type. Live endpoints need https://.
  delete --endpoint <we_...>
      Deletes the endpoint: nothing more is sent to it.
  rotate-secret --endpoint <we_...> [--expires-in <duration>] [--json]
      Prints a new signing secret ONCE; the old one keeps signing beside it for --expires-in
      (0s to 7d, default 24h), so receivers can switch without losing a delivery.
  enable --endpoint <we_...>
      Turns an endpoint that was disabled after repeated failures back on.
  deliveries --endpoint <we_...> [--limit <n>] [--json]
      Its latest delivery attempts (default 50, at most 100), newest first: event, attempt, outcome
      (succeeded, failed and retried later, gave_up), response status or error, latency, next attempt.
  resend --endpoint <we_...> --event <evt_...>
      Queues one event (of this merchant and mode) for the endpoint again, due now, with its own id.

Environment: the admin service's: REDIS_URL, API_KEY_PEPPER or API_KEY_PEPPERS (same value as the gateway: secrets
are derived from it), NODE_ENV, TESSERA_STATE_DIR. Beside npm start none: without REDIS_URL it reads what npm start
wrote in .tessera/admin/stack.json.`;

type Io = CliIo;

const OPTIONS = {
  merchant: { type: 'string' },
  mode: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  endpoint: { type: 'string' },
  event: { type: 'string' },
  'expires-in': { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Parsed = Extract<ReturnType<typeof parseCommandLine<typeof OPTIONS>>, { ok: true }>['args'];

const COMMANDS = ['list', 'create', 'delete', 'rotate-secret', 'enable', 'deliveries', 'resend'] as const;
type Command = (typeof COMMANDS)[number];

/** Everything a command needs, checked before anything touches Redis. */
interface Plan {
  command: Command;
  merchantId: string;
  mode: KeyMode;
  endpointId: string;
  create?: CreateWebhookEndpointInput;
  overlapSeconds?: number;
  eventId?: string;
  limit?: number;
  json: boolean;
}

const DURATION_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const;

/** `0s`, `90s`, `30m`, `24h`, `7d` (a bare number is seconds) as seconds; undefined for anything else. */
export function parseDurationSeconds(text: string): number | undefined {
  const match = /^(\d{1,7})([smhd])?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * DURATION_SECONDS[(match[2] ?? 's') as keyof typeof DURATION_SECONDS];
}

/** A use case's input check, before Redis: a refusal is a usage error (exit 2). */
function asUsage<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    // The message may quote what was typed: a card number pasted by mistake is masked, as in the API's errors.
    if (err instanceof TesseraError && err.status === 400) {
      throw new UsageError(maskCardNumbers(err.message.replace(/^"(\w+)"/, (_m, name) => flagOf(name))));
    }
    throw err;
  }
}

/** The API's field names as the CLI's flags, in messages. */
function flagOf(field: string): string {
  return { url: '--url', enabledEvents: '--events', expiresInSeconds: '--expires-in' }[field] ?? `"${field}"`;
}

function plan(command: Command, args: Parsed): Plan {
  if (args.positionals.length > 1) throw new UsageError(`${command} takes no positional arguments`);
  const merchantId = merchantFlag(args.values.merchant, command);
  const mode = args.values.mode;
  if (mode !== 'test' && mode !== 'live') throw new UsageError(`${command} needs --mode test or --mode live`);
  const json = args.values.json ?? false;
  const base = { command, merchantId, mode, json } as const;
  const allowed: Record<Command, (keyof typeof OPTIONS)[]> = {
    list: [],
    create: ['url', 'events'],
    delete: ['endpoint'],
    'rotate-secret': ['endpoint', 'expires-in'],
    enable: ['endpoint'],
    deliveries: ['endpoint', 'limit'],
    resend: ['endpoint', 'event'],
  };
  for (const flag of ['url', 'events', 'endpoint', 'event', 'expires-in', 'limit'] as const) {
    if (args.values[flag] !== undefined && !allowed[command].includes(flag)) throw new UsageError(`${command} takes no --${flag}`);
  }
  if (command === 'list') return { ...base, endpointId: '' };
  if (command === 'create') {
    const { url, events } = args.values;
    if (url === undefined) throw new UsageError('create needs --url <url>');
    if (events === undefined) throw new UsageError('create needs --events <type>[,<type>...] (or --events "*")');
    const enabledEvents = events
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    return { ...base, endpointId: '', create: asUsage(() => parseWebhookEndpointInput({ url, enabledEvents }, mode)) };
  }
  const endpointId = args.values.endpoint;
  if (endpointId === undefined) throw new UsageError(`${command} needs --endpoint <we_...> (see \`list\`)`);
  if (!WEBHOOK_ENDPOINT_ID_PATTERN.test(endpointId))
    throw new UsageError('--endpoint must be a webhook endpoint id: we_ and 32 characters');
  if (command === 'rotate-secret') {
    const given = args.values['expires-in'];
    const seconds = given === undefined ? undefined : parseDurationSeconds(given);
    if (given !== undefined && seconds === undefined)
      throw new UsageError(`--expires-in "${given}" must be a duration such as 0s, 30m, 24h or 7d`);
    return {
      ...base,
      endpointId,
      overlapSeconds: asUsage(() => parseSecretOverlap(seconds === undefined ? {} : { expiresInSeconds: seconds })),
    };
  }
  if (command === 'deliveries') {
    const given = args.values.limit;
    const limit = given === undefined ? undefined : Number(given);
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_DELIVERY_LIMIT)) {
      throw new UsageError(`--limit must be a whole number from 1 to ${MAX_DELIVERY_LIMIT}`);
    }
    return { ...base, endpointId, ...(limit !== undefined ? { limit } : {}) };
  }
  if (command === 'resend') {
    const eventId = args.values.event;
    if (eventId === undefined) throw new UsageError('resend needs --event <evt_...> (see `deliveries`)');
    if (!EVENT_ID_PATTERN.test(eventId)) throw new UsageError('--event must be an event id: evt_ and 16 characters');
    return { ...base, endpointId, eventId };
  }
  return { ...base, endpointId };
}

/** A use case's refusal as the CLI says it: an unknown endpoint by name, anything else with its reason. */
async function commandFor<T>(p: Plan, run: () => Promise<T>): Promise<T> {
  return asCommand(async () => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof TesseraError && err.code === 'webhook_endpoint_not_found') {
        throw new CommandError(`no ${p.mode} webhook endpoint ${p.endpointId} for merchant ${p.merchantId}`);
      }
      if (err instanceof TesseraError && err.code === 'event_not_found') {
        throw new CommandError(`no event ${p.eventId ?? ''} for merchant ${p.merchantId} (it may have passed the retention time)`);
      }
      throw err;
    }
  });
}

function table(rows: string[][], io: Io): void {
  const widths = (rows[0] ?? []).map((_h, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  for (const row of rows) {
    io.out(
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
  }
}

function statusOf(e: WebhookEndpointView): string {
  return e.status === 'disabled' ? `disabled${e.disabledReason ? ` (${e.disabledReason})` : ''}` : 'enabled';
}

function printSecret(endpoint: WebhookEndpointView, secret: string, json: boolean, io: Io, intro: string): void {
  if (json) {
    io.out(JSON.stringify({ ...endpoint, secret }));
    return;
  }
  io.out(intro);
  io.out('');
  io.out(`  ${secret}`);
  io.out('');
  io.out('This is the only time this secret is shown. Store it where your receiver reads it (an environment variable).');
}

async function run(deps: WebhookEndpointDeps, p: Plan, io: Io): Promise<void> {
  const caller = cliCaller();
  const { merchantId, mode, endpointId } = p;
  switch (p.command) {
    case 'list': {
      const endpoints = await listWebhookEndpoints(deps, caller, merchantId, mode);
      if (p.json) return io.out(JSON.stringify(endpoints));
      if (endpoints.length === 0) return io.out(`No ${mode} webhook endpoints for ${merchantId}.`);
      return table(
        [
          ['ID', 'URL', 'EVENTS', 'STATUS', 'CREATED'],
          ...endpoints.map((e) => [e.id, e.url, e.enabledEvents.join(','), statusOf(e), e.createdAt]),
        ],
        io,
      );
    }
    case 'create': {
      const { endpoint, secret } = await commandFor(p, () => createWebhookEndpoint(deps, caller, merchantId, mode, p.create!));
      return printSecret(
        endpoint,
        secret,
        p.json,
        io,
        `Created ${mode} webhook endpoint ${endpoint.id} for merchant ${merchantId}: ${endpoint.url} (${endpoint.enabledEvents.join(', ')}).`,
      );
    }
    case 'delete':
      await commandFor(p, () => deleteWebhookEndpoint(deps, caller, merchantId, mode, endpointId));
      return io.out(`Deleted webhook endpoint ${endpointId}: nothing more is sent to it.`);
    case 'rotate-secret': {
      const { endpoint, secret } = await commandFor(p, () =>
        rotateWebhookSecret(deps, caller, merchantId, mode, endpointId, p.overlapSeconds ?? DEFAULT_SECRET_OVERLAP_SECONDS),
      );
      const until = endpoint.previousSecretExpiresAt;
      return printSecret(
        endpoint,
        secret,
        p.json,
        io,
        `New signing secret for ${endpointId}. ${until ? `The previous one keeps signing until ${until}.` : 'The previous one no longer signs.'}`,
      );
    }
    case 'enable': {
      const { endpoint, alreadyEnabled } = await commandFor(p, () => enableWebhookEndpoint(deps, caller, merchantId, mode, endpointId));
      return io.out(
        alreadyEnabled ? `${endpoint.id} is already enabled.` : `Enabled ${endpoint.id}: deliveries to ${endpoint.url} resume.`,
      );
    }
    case 'deliveries': {
      const result = await commandFor(p, () => listWebhookDeliveries(deps, caller, merchantId, mode, endpointId, p.limit));
      if (p.json) return io.out(JSON.stringify(result));
      const { deliveries, queued } = result;
      io.out(
        queued.depth === 0
          ? 'Nothing waits in its queue.'
          : `Waiting in its queue: ${queued.depth} event${queued.depth === 1 ? '' : 's'} (the oldest created ${queued.oldestCreatedAt}).`,
      );
      if (deliveries.length === 0) return io.out(`No deliveries to ${endpointId} yet.`);
      return table(
        [['TIME', 'EVENT', 'TYPE', 'ATTEMPT', 'OUTCOME', 'STATUS', 'LATENCY', 'NEXT ATTEMPT'], ...deliveries.map(deliveryRow)],
        io,
      );
    }
    case 'resend':
      await commandFor(p, () => resendWebhookEvent(deps, caller, merchantId, mode, endpointId, p.eventId!));
      return io.out(`Queued ${p.eventId} for ${endpointId} again; \`deliveries\` shows the attempt once it is made.`);
  }
}

function deliveryRow(d: WebhookDeliveryAttempt): string[] {
  return [
    d.at,
    d.eventId,
    d.eventType,
    String(d.attempt),
    d.outcome,
    d.responseStatus === null ? (d.error ?? '-') : String(d.responseStatus),
    d.latencyMs === null ? '-' : `${Math.round(d.latencyMs)} ms`,
    d.nextAttemptAt ?? '-',
  ];
}

export async function runWebhooksCli(argv: string[], environment: NodeJS.ProcessEnv, io: Io): Promise<number> {
  const parsed = parseSubcommandLine(argv, OPTIONS, USAGE, io, COMMANDS);
  if (!parsed.ok) return parsed.exitCode;
  const { args, command } = parsed;
  let checked: Plan;
  try {
    checked = plan(command as Command, args);
  } catch (err) {
    return reportUsageError(err, USAGE, io);
  }

  return runWithCliRedis(
    environment,
    io,
    "Webhook endpoints live in the gateway's Redis: point REDIS_URL (and API_KEY_PEPPER) at the same values the gateway uses.",
    async ({ config, redis }) => {
      const { pepper } = cliPepper(config, io);
      await connectCliRedis(redis);
      const deps: WebhookEndpointDeps = {
        endpoints: new RedisWebhookEndpointStore(redis),
        audit: new RedisAuditLog(redis, config.ADMIN_AUDIT_MAX_ENTRIES),
        pepper,
        now: () => new Date(),
        deliveries: webhookDeliveriesOver(new RedisWebhookDeliveryStore(redis), new RedisEventStore(redis)),
      };
      await run(deps, checked, io);
    },
  );
}

// Beside npm start, with no Redis named: the stack it runs (.tessera/admin/stack.json).
if (require.main === module) runCliMain(runWebhooksCli, withLocalStack('admin', process.env));
