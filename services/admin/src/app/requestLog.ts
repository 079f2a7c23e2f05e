import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import { canManageMerchant } from '../domain/operators';
import {
  buildRequestStats,
  ENTRY_ID_PATTERN,
  matchesFilter,
  type RequestLogEntry,
  type RequestLogFilter,
  type RequestLogReader,
  type RequestLogSummary,
  type RequestStats,
  STATS_MAX_HOURS,
  summaryOf,
} from '@tessera/merchant-data';
import { parseInput } from '@tessera/edge';

/**
 * The merchants' request log, reading side: what an operator can ask of it (list, one entry,
 * per-minute statistics), for the admin API and so the dashboard. The gateway writes it.
 */

export interface RequestLogDeps {
  store: RequestLogReader;
  /** The configured retention: nothing older is shown, even before Redis trimmed it. */
  maxAgeMs: number;
  now: () => Date;
}

/** Who asks: a merchant operator sees only its own merchant. */
export interface LogCaller {
  merchantId: string | null;
}

const merchantIdSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'A merchant id is 1-64 letters, digits, "_", "." or "-".' });
const entryIdSchema = z.string().regex(ENTRY_ID_PATTERN, { error: 'Not a request log entry id.' });
const isoTime = z.iso.datetime({ offset: true, error: 'Must be an ISO 8601 time such as 2026-01-31T14:02:00Z.' });

export function listRequestsQuerySchema() {
  return z.strictObject({
    merchantId: merchantIdSchema.optional().meta({ description: 'Required for platform operators; a merchant operator sees its own.' }),
    status: z.enum(['2xx', '3xx', '4xx', '5xx']).optional().meta({ description: 'Status class of the answer.' }),
    path: z.string().max(300).optional().meta({ description: 'A route pattern (`/v1/token/:token`) or a path (`/v1/token/tok.…`).' }),
    keyId: z.string().max(64).optional(),
    requestId: z.string().max(128).optional().meta({ description: 'The `x-request-id` of the request.' }),
    mode: z.enum(['test', 'live']).optional(),
    from: isoTime.optional().meta({ description: 'Only entries at or after this time.' }),
    to: isoTime.optional().meta({ description: 'Only entries at or before this time.' }),
    cursor: entryIdSchema.optional().meta({ description: '`nextCursor` of the previous page.' }),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  });
}

export function requestStatsQuerySchema() {
  return z.strictObject({
    merchantId: merchantIdSchema.optional(),
    hours: z.coerce.number().int().min(1).max(STATS_MAX_HOURS).default(3).meta({ description: 'The last this many hours, per minute.' }),
  });
}

export function requestDetailQuerySchema() {
  return z.strictObject({ merchantId: merchantIdSchema.optional() });
}

export type ListRequestsQuery = z.output<ReturnType<typeof listRequestsQuerySchema>>;
export type RequestStatsQuery = z.output<ReturnType<typeof requestStatsQuerySchema>>;

export function parseListRequestsQuery(query: Record<string, unknown>): ListRequestsQuery {
  return parseInput(listRequestsQuerySchema(), query);
}

export function parseRequestDetailQuery(query: Record<string, unknown>): { merchantId?: string | undefined } {
  return parseInput(requestDetailQuerySchema(), query);
}

export function parseRequestStatsQuery(query: Record<string, unknown>): RequestStatsQuery {
  return parseInput(requestStatsQuerySchema(), query);
}

/** The merchant whose log is read: a merchant operator's own, or the one a platform operator names. */
function merchantOf(caller: LogCaller, requested: string | undefined): string {
  if (requested === undefined) {
    if (caller.merchantId === null)
      throw new TesseraError('parameter_missing', { param: 'merchantId', message: '"merchantId" is required.' });
    return caller.merchantId;
  }
  if (!canManageMerchant(caller, requested)) throw new TesseraError('merchant_forbidden', { param: 'merchantId' });
  return requested;
}

/** A page reads the log in slices of this many entries and looks at no more than SCAN_LIMIT of them. */
const SLICE = 200;
const SCAN_LIMIT = 5000;

export interface RequestPage {
  merchantId: string;
  entries: RequestLogSummary[];
  /** Pass as `cursor` for older entries; null: the log has no more. */
  nextCursor: string | null;
}

/**
 * Newest first, filtered. A filter is applied while reading, so one page looks at up to SCAN_LIMIT
 * entries: it may then hold fewer than `limit` entries and still a nextCursor to read on from.
 */
export async function listRequests(deps: RequestLogDeps, caller: LogCaller, query: ListRequestsQuery): Promise<RequestPage> {
  const merchantId = merchantOf(caller, query.merchantId);
  const oldestMs = deps.now().getTime() - deps.maxAgeMs;
  const fromMs = Math.max(oldestMs, query.from === undefined ? 0 : Date.parse(query.from));
  const toMs = query.to === undefined ? undefined : Date.parse(query.to);
  const filter: RequestLogFilter = {
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.path !== undefined ? { path: query.path } : {}),
    ...(query.keyId !== undefined ? { keyId: query.keyId } : {}),
    ...(query.requestId !== undefined ? { requestId: query.requestId } : {}),
    ...(query.mode !== undefined ? { mode: query.mode } : {}),
  };
  const entries: RequestLogSummary[] = [];
  let before = query.cursor;
  let scanned = 0;
  for (;;) {
    const slice = await deps.store.range(merchantId, {
      ...(before !== undefined ? { before } : {}),
      fromMs,
      ...(toMs !== undefined ? { toMs } : {}),
      count: SLICE,
    });
    for (const entry of slice) {
      scanned++;
      before = entry.id;
      if (matchesFilter(entry, filter)) entries.push(summaryOf(entry));
      if (entries.length >= query.limit) return { merchantId, entries, nextCursor: entry.id };
    }
    if (slice.length < SLICE) return { merchantId, entries, nextCursor: null };
    if (scanned >= SCAN_LIMIT) return { merchantId, entries, nextCursor: before ?? null };
  }
}

export async function getRequest(
  deps: RequestLogDeps,
  caller: LogCaller,
  requested: string | undefined,
  id: string,
): Promise<RequestLogEntry> {
  const merchantId = merchantOf(caller, requested);
  const entry = ENTRY_ID_PATTERN.test(id) ? await deps.store.get(merchantId, id) : undefined;
  if (entry === undefined || Date.parse(entry.at) < deps.now().getTime() - deps.maxAgeMs) {
    throw new TesseraError('request_log_entry_not_found');
  }
  return entry;
}

export async function requestStats(
  deps: RequestLogDeps,
  caller: LogCaller,
  query: RequestStatsQuery,
): Promise<RequestStats & { merchantId: string }> {
  const merchantId = merchantOf(caller, query.merchantId);
  const toMinute = Math.floor(deps.now().getTime() / 60_000) + 1;
  const fromMinute = toMinute - query.hours * 60;
  const counters = await deps.store.minuteCounters(merchantId, fromMinute, toMinute);
  return { merchantId, ...buildRequestStats(counters, fromMinute, toMinute) };
}
