import { maskCardNumbers, mayHoldCardNumber } from '@tessera/common';
import { CARD_NUMBER_LIKE, pspHostOf } from './detokenizationAudit';

/**
 * The merchant's request log (docs/dashboard.md#requests): one entry per /v1 request made with one
 * of the merchant's keys, so "what did my PSP answer at 14:02, and why?" has an answer. Never card
 * data: no request or response body, no header value, no PSP path or query. What a caller typed
 * and is kept (the pspBody template, header names, the token, the PSP host) goes through the one
 * card-number detector first, so a PAN typed into a template is stored as `[redacted]`.
 */
export interface RequestLogEntry {
  /** The entry's id in its merchant's log (also the list's cursor): time-ordered, no long digit run. */
  id: string;
  at: string;
  requestId: string;
  keyId: string;
  mode: string;
  method: string;
  /** The route pattern (`/v1/token/:token`), never the raw URL: a query could carry anything. */
  route: string;
  /** The route with its token filled in (`/v1/token/tok.…`); a card-number-like token is `[card number]`. */
  path: string;
  status: number;
  /** Tessera's error code (`x-tessera-error`); null when Tessera made no error (a PSP's own answer included). */
  code: string | null;
  /** The gateway's total time, PSP time included. */
  ms: number;
  /** The client went away before the answer was sent. */
  aborted?: true;
  /** /v1/proxy and /v1/proxy/dry-run only. */
  psp?: PspCallEntry;
}

export interface PspCallEntry {
  /** host[:port] of pspUrl; a card-number-like host is `[card number]`. */
  host: string;
  method: string;
  /** The PSP's status; null when it was not reached (refused destination, timeout, unreachable). */
  status: number | null;
  /** Time the PSP took, as the proxy measured it; null when it was not reached. */
  ms: number | null;
  token: string;
  /** The pspBody as the merchant sent it (placeholders, never the rendered body), masked, cut at BODY_TEMPLATE_MAX_CHARS. */
  bodyTemplate: string | null;
  bodyTemplateTruncated?: true;
  /** The pspHeaders' names (masked); never their values. */
  headerNames: string[];
}

/** The list shows this much of an entry; the detail endpoint shows all of it. */
export type RequestLogSummary = Omit<RequestLogEntry, 'psp'> & { psp?: Pick<PspCallEntry, 'host' | 'method' | 'status' | 'ms'> };

/** Enough for any real payment request; keeps one entry (and so the log's memory) bounded. */
export const BODY_TEMPLATE_MAX_CHARS = 4096;
const MAX_HEADER_NAMES = 50;

/** What the gateway knows of a proxy call when its answer went out: the caller's fields as parsed. */
export interface ProxyCallFacts {
  pspUrl: string;
  method: string;
  token: string;
  bodyTemplate: string | null;
  headerNames: readonly string[];
  pspStatus: number | null;
  pspMs: number | null;
}

/** Everything the transport captures when a response finishes; turned into an entry off the request's path. */
export interface RequestFacts extends Pick<
  RequestLogEntry,
  'requestId' | 'keyId' | 'mode' | 'method' | 'route' | 'status' | 'code' | 'ms'
> {
  at: Date;
  merchantId: string;
  /** The request's path (no query): only the route's parameters are taken from it. */
  path: string;
  aborted: boolean;
  proxy?: ProxyCallFacts;
}

function storable(text: string): string {
  return mayHoldCardNumber(text) ? CARD_NUMBER_LIKE : text;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * The template masked and cut to BODY_TEMPLATE_MAX_CHARS. The cut can end inside a card number
 * whose detectable part lies beyond it (the kept digits alone pass no Luhn check), so whatever
 * follows the last letter before the cut goes too: digits and separators, never a letter, make up
 * a run. Linear, unlike a regular expression anchored at the end.
 */
export function storableBodyTemplate(template: string): { text: string; truncated: boolean } {
  if (template.length <= BODY_TEMPLATE_MAX_CHARS) return { text: maskCardNumbers(template), truncated: false };
  let end = BODY_TEMPLATE_MAX_CHARS;
  while (end > 0 && !isAsciiLetter(template.charCodeAt(end - 1))) end--;
  return { text: maskCardNumbers(template.slice(0, end)), truncated: true };
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The route pattern with its parameters taken from the request's path (`/v1/token/:token` and
 * `/v1/token/tok.x` give `/v1/token/tok.x`), each through the detector; every other character is
 * the pattern's own, so nothing else a client typed into the URL is kept.
 */
export function pathOf(route: string, requestPath: string): string {
  const actual = requestPath.split('/');
  return route
    .split('/')
    .map((segment, i) => {
      if (!segment.startsWith(':')) return segment;
      const value = actual[i];
      return value === undefined ? segment : encodeURIComponent(storable(decodedSegment(value).slice(0, 256)));
    })
    .join('/');
}

/** An entry before its log gives it an id. */
export type RequestLogRecord = Omit<RequestLogEntry, 'id'>;

export function buildRequestLogRecord(facts: RequestFacts): RequestLogRecord {
  const entry: RequestLogRecord = {
    at: facts.at.toISOString(),
    requestId: facts.requestId,
    keyId: facts.keyId,
    mode: facts.mode,
    method: facts.method,
    route: facts.route,
    path: pathOf(facts.route, facts.path),
    status: facts.status,
    code: facts.code,
    ms: Math.round(facts.ms * 10) / 10,
  };
  if (facts.aborted) entry.aborted = true;
  const proxy = facts.proxy;
  if (proxy) {
    const body = proxy.bodyTemplate === null ? null : storableBodyTemplate(proxy.bodyTemplate);
    entry.psp = {
      host: pspHostOf(proxy.pspUrl),
      method: proxy.method,
      status: proxy.pspStatus,
      ms: proxy.pspMs === null ? null : Math.round(proxy.pspMs * 10) / 10,
      token: storable(proxy.token.slice(0, 256)),
      bodyTemplate: body?.text ?? null,
      headerNames: proxy.headerNames.slice(0, MAX_HEADER_NAMES).map((name) => maskCardNumbers(name.slice(0, 256))),
    };
    if (body?.truncated) entry.psp.bodyTemplateTruncated = true;
  }
  return entry;
}

export function summaryOf(entry: RequestLogEntry): RequestLogSummary {
  const { psp, ...rest } = entry;
  return psp === undefined ? rest : { ...rest, psp: { host: psp.host, method: psp.method, status: psp.status, ms: psp.ms } };
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

export interface RequestLogFilter {
  status?: StatusClass;
  /** A route pattern (`/v1/token/:token`) or a path (`/v1/token/tok.…`). */
  path?: string;
  keyId?: string;
  requestId?: string;
  mode?: string;
}

export function matchesFilter(entry: RequestLogEntry, filter: RequestLogFilter): boolean {
  if (filter.status !== undefined && `${Math.floor(entry.status / 100)}xx` !== filter.status) return false;
  if (filter.path !== undefined && entry.route !== filter.path && entry.path !== filter.path) return false;
  if (filter.keyId !== undefined && entry.keyId !== filter.keyId) return false;
  if (filter.requestId !== undefined && entry.requestId !== filter.requestId) return false;
  if (filter.mode !== undefined && entry.mode !== filter.mode) return false;
  return true;
}

// ---- per-minute statistics ----------------------------------------------------------------

/**
 * PSP latency is counted in buckets four to a doubling (bucket b holds times up to 2^(b/4) ms), so
 * a percentile read back is at most 19 % above the true one, and a minute's counts stay a handful
 * of small hash fields whatever the traffic.
 */
const BUCKETS_PER_DOUBLING = 4;
const MAX_BUCKET = 80;

export function latencyBucket(ms: number): number {
  if (!(ms > 1)) return 0;
  return Math.min(MAX_BUCKET, Math.ceil(Math.log2(ms) * BUCKETS_PER_DOUBLING - 1e-9));
}

export function bucketUpperMs(bucket: number): number {
  return Math.round(2 ** (bucket / BUCKETS_PER_DOUBLING) * 10) / 10;
}

/** One minute's counters, as stored: `n` requests, `c4`/`c5` 4xx/5xx answers, `b<i>` PSP calls per latency bucket. */
export type MinuteCounters = Record<string, number>;

/** The counters an entry adds to its minute. */
export function countersOf(entry: RequestLogRecord): MinuteCounters {
  const counters: MinuteCounters = { n: 1 };
  if (entry.status >= 500) counters.c5 = 1;
  else if (entry.status >= 400) counters.c4 = 1;
  if (entry.psp?.ms !== null && entry.psp?.ms !== undefined) counters[`b${latencyBucket(entry.psp.ms)}`] = 1;
  return counters;
}

/** The smallest bucket bound under which `share` of the counted calls fall; null without calls. */
export function percentileMs(buckets: ReadonlyMap<number, number>, share: number): number | null {
  let total = 0;
  for (const count of buckets.values()) total += count;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(total * share));
  let seen = 0;
  for (const bucket of [...buckets.keys()].sort((a, b) => a - b)) {
    seen += buckets.get(bucket) ?? 0;
    if (seen >= rank) return bucketUpperMs(bucket);
  }
  return null;
}

export interface MinuteStats {
  at: string;
  requests: number;
  clientErrors: number;
  serverErrors: number;
  /** (4xx + 5xx) / requests; 0 for a minute without requests. */
  errorRate: number;
  pspCalls: number;
  pspP50Ms: number | null;
  pspP99Ms: number | null;
}

export interface RequestStats {
  from: string;
  to: string;
  minutes: MinuteStats[];
  totals: Omit<MinuteStats, 'at'>;
}

function statsOf(at: string, counters: MinuteCounters | undefined, buckets: Map<number, number>): MinuteStats {
  const requests = counters?.n ?? 0;
  const clientErrors = counters?.c4 ?? 0;
  const serverErrors = counters?.c5 ?? 0;
  let pspCalls = 0;
  for (const count of buckets.values()) pspCalls += count;
  return {
    at,
    requests,
    clientErrors,
    serverErrors,
    errorRate: requests === 0 ? 0 : Math.round(((clientErrors + serverErrors) / requests) * 10_000) / 10_000,
    pspCalls,
    pspP50Ms: percentileMs(buckets, 0.5),
    pspP99Ms: percentileMs(buckets, 0.99),
  };
}

function bucketsOf(counters: MinuteCounters | undefined, into = new Map<number, number>()): Map<number, number> {
  for (const [field, count] of Object.entries(counters ?? {})) {
    if (field.startsWith('b')) {
      const bucket = Number(field.slice(1));
      into.set(bucket, (into.get(bucket) ?? 0) + count);
    }
  }
  return into;
}

/** A dense series, one point per minute from `fromMinute` (inclusive) to `toMinute` (exclusive), minutes since the epoch. */
export function buildRequestStats(byMinute: ReadonlyMap<number, MinuteCounters>, fromMinute: number, toMinute: number): RequestStats {
  const minutes: MinuteStats[] = [];
  const total: MinuteCounters = {};
  const allBuckets = new Map<number, number>();
  for (let minute = fromMinute; minute < toMinute; minute++) {
    const counters = byMinute.get(minute);
    minutes.push(statsOf(new Date(minute * 60_000).toISOString(), counters, bucketsOf(counters)));
    for (const [field, count] of Object.entries(counters ?? {})) total[field] = (total[field] ?? 0) + count;
    bucketsOf(counters, allBuckets);
  }
  const { at: _at, ...totals } = statsOf('', total, allBuckets);
  return { from: new Date(fromMinute * 60_000).toISOString(), to: new Date(toMinute * 60_000).toISOString(), minutes, totals };
}
