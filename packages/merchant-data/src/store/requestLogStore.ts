import type { Redis } from 'ioredis';
import { redisUnavailable } from '@tessera/common/redis';
import { merchantSlot } from '../domain/slots';
import { countersOf, type MinuteCounters, type RequestLogEntry, type RequestLogRecord } from '../domain/requestLog';

/** One record on its way to its merchant's log. */
export interface MerchantRecord {
  merchantId: string;
  record: RequestLogRecord;
}

/** A slice of a merchant's log, newest first: entries strictly before `before` (an entry id), within [fromMs, toMs]. */
export interface LogRange {
  before?: string;
  fromMs?: number;
  toMs?: number;
  count: number;
}

export interface RequestLogRetention {
  /** Entries kept per merchant (trimmed approximately, a few more may stay). */
  maxEntries: number;
  /** Entries older than this are trimmed; a merchant's log with no newer entry disappears. */
  maxAgeMs: number;
}

/** What the process that serves the requests needs of the log: it only writes. */
export interface RequestLogWriter {
  /** Appends a batch in one round trip; resolves to how many records could not be stored. */
  append(batch: readonly MerchantRecord[], now: Date): Promise<number>;
}

/** What the request-log views need: they only read. */
export interface RequestLogReader {
  range(merchantId: string, range: LogRange): Promise<RequestLogEntry[]>;
  get(merchantId: string, id: string): Promise<RequestLogEntry | undefined>;
  /** Counters by minute since the epoch, for minutes in [fromMinute, toMinute). */
  minuteCounters(merchantId: string, fromMinute: number, toMinute: number): Promise<Map<number, MinuteCounters>>;
}

export interface RequestLogStore extends RequestLogWriter, RequestLogReader {}

/** Statistics cover at most the last day; their hashes outlive it by an hour, whatever the log's retention. */
export const STATS_MAX_HOURS = 24;
const STATS_TTL_SECONDS = (STATS_MAX_HOURS + 1) * 3600;

/**
 * An entry id is its stream id (`<ms>-<seq>`) in base 36: a millisecond time is a 13-digit run that
 * the card-number detector flags about a quarter of the time, so ids shown or scanned in the admin
 * API would look like card numbers.
 */
export const ENTRY_ID_PATTERN = /^[0-9a-z]{1,11}-[0-9a-z]{1,13}$/;

export function entryIdOf(streamId: string): string {
  const [ms, seq] = streamId.split('-');
  return `${Number(ms).toString(36)}-${Number(seq).toString(36)}`;
}

/** The stream id of an entry id; undefined when it is not one. */
export function streamIdOf(entryId: string): string | undefined {
  if (!ENTRY_ID_PATTERN.test(entryId)) return undefined;
  const [ms, seq] = entryId.split('-').map((part) => parseInt(part, 36));
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(seq)) return undefined;
  return `${ms}-${seq}`;
}

function msOfEntryId(entryId: string): number {
  return parseInt(entryId.split('-')[0] ?? '0', 36);
}

const minuteOf = (at: string): number => Math.floor(Date.parse(at) / 60_000);

/**
 * The time order of two Redis stream ids `<ms>-<seq>`, oldest first (swap them for newest first);
 * `radix` 36 compares entry ids, which are stream ids in base 36.
 */
export function compareStreamIds(a: string, b: string, radix = 10): number {
  const [am = 0, as = 0] = a.split('-').map((p) => parseInt(p, radix));
  const [bm = 0, bs = 0] = b.split('-').map((p) => parseInt(p, radix));
  return am !== bm ? am - bm : as - bs;
}

export const REQUEST_LOG_PREFIX = 'tessera:request-log:';
export const REQUEST_STATS_PREFIX = 'tessera:request-stats:';
/** A merchant's log, in its slot (domain/slots.ts), as its hourly counters. */
const logKey = (merchantId: string): string => REQUEST_LOG_PREFIX + merchantSlot(merchantId);
const statsKey = (merchantId: string, hour: number): string => `${REQUEST_STATS_PREFIX}${merchantSlot(merchantId)}:${hour}`;

/**
 * A Redis stream per merchant, `tessera:request-log:{m:<merchantId>}`, capped by XADD MAXLEN ~ and
 * XTRIM MINID ~ (Redis trims whole nodes, cheaply, so a few more entries than the limits may
 * stay) and expiring when nothing was added for the retention time. Per-minute counters for the
 * statistics sit in one hash per merchant and hour, `tessera:request-stats:{m:<merchantId>}:<hour>`, so
 * a chart over hours reads at most 24 small hashes instead of the entries themselves.
 */
export class RedisRequestLogStore implements RequestLogStore {
  constructor(
    private readonly redis: Redis,
    private readonly retention: RequestLogRetention,
  ) {}

  /**
   * Plain commands, not an explicit pipeline: on the gateway's auto-pipelining client they leave in
   * the same socket write as whatever else was queued in this turn of the event loop, above all
   * the call's detokenization audit entry (detokenizationLog.ts), where a pipeline of their own
   * would be a write (and a Redis wake-up, and a reply to read) of its own. The price: ioredis
   * keeps one auto-pipeline in flight, so a next request's key lookup issued meanwhile waits for
   * this reply. A shared explicit pipeline avoided that but cost Redis more wake-ups per request
   * in `npm run bench` (sequential proxy 2.9 against 2.5, tokenize 2.8 against 2.5), at no
   * latency difference that could be measured.
   */
  async append(batch: readonly MerchantRecord[], now: Date): Promise<number> {
    if (batch.length === 0) return 0;
    const redis = this.redis;
    const merchants = new Set<string>();
    const stats = new Map<string, MinuteCounters>();
    const entries: Array<Promise<unknown>> = [];
    for (const { merchantId, record } of batch) {
      merchants.add(merchantId);
      entries.push(redis.xadd(logKey(merchantId), 'MAXLEN', '~', this.retention.maxEntries, '*', 'e', JSON.stringify(record)));
      const minute = minuteOf(record.at);
      const key = statsKey(merchantId, Math.floor(minute / 60));
      const fields = stats.get(key) ?? {};
      for (const [name, count] of Object.entries(countersOf(record)))
        fields[`${minute}:${name}`] = (fields[`${minute}:${name}`] ?? 0) + count;
      stats.set(key, fields);
    }
    const upkeep: Array<Promise<unknown>> = [];
    // Counted per batch, not per request: a busy minute is one HINCRBY per counter per flush.
    for (const [key, fields] of stats) {
      for (const [field, count] of Object.entries(fields)) upkeep.push(redis.hincrby(key, field, count));
      upkeep.push(redis.expire(key, STATS_TTL_SECONDS));
    }
    const oldest = now.getTime() - this.retention.maxAgeMs;
    for (const merchantId of merchants) {
      upkeep.push(redis.xtrim(logKey(merchantId), 'MINID', '~', oldest));
      upkeep.push(redis.pexpire(logKey(merchantId), this.retention.maxAgeMs));
    }
    // Counters and trimming are best effort, as they were in a pipeline: only the entries count.
    const [added] = await Promise.all([Promise.allSettled(entries), Promise.allSettled(upkeep)]);
    const failures = added.filter((result) => result.status === 'rejected');
    // Nothing stored at all is Redis being unavailable (the recorder logs it), not a refused entry.
    if (failures.length === batch.length) throw redisUnavailable(failures[0]?.reason);
    return failures.length;
  }

  async range(merchantId: string, range: LogRange): Promise<RequestLogEntry[]> {
    const before = range.before === undefined ? undefined : streamIdOf(range.before);
    const end = before !== undefined ? `(${before}` : range.toMs !== undefined ? String(range.toMs) : '+';
    const start = range.fromMs !== undefined ? String(range.fromMs) : '-';
    try {
      const rows = await this.redis.xrevrange(logKey(merchantId), end, start, 'COUNT', range.count);
      const entries = rows.map(([id, fields]) => entryOf(id, fields));
      // With a cursor the end is the cursor; `to` still bounds a cursor made up beyond it.
      const toMs = range.toMs;
      return toMs === undefined || before === undefined ? entries : entries.filter((e) => msOfEntryId(e.id) <= toMs);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async get(merchantId: string, id: string): Promise<RequestLogEntry | undefined> {
    const streamId = streamIdOf(id);
    if (streamId === undefined) return undefined;
    try {
      const rows = await this.redis.xrange(logKey(merchantId), streamId, streamId);
      const row = rows[0];
      return row === undefined ? undefined : entryOf(row[0], row[1]);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async minuteCounters(merchantId: string, fromMinute: number, toMinute: number): Promise<Map<number, MinuteCounters>> {
    const hours: number[] = [];
    for (let hour = Math.floor(fromMinute / 60); hour * 60 < toMinute; hour++) hours.push(hour);
    let hashes: Array<Record<string, string>>;
    try {
      hashes = await Promise.all(hours.map((hour) => this.redis.hgetall(statsKey(merchantId, hour))));
    } catch (err) {
      throw redisUnavailable(err);
    }
    const out = new Map<number, MinuteCounters>();
    for (const hash of hashes) {
      for (const [field, value] of Object.entries(hash)) {
        const [minuteText, name] = field.split(':');
        const minute = Number(minuteText);
        if (name === undefined || !(minute >= fromMinute && minute < toMinute)) continue;
        const counters = out.get(minute) ?? {};
        counters[name] = Number(value);
        out.set(minute, counters);
      }
    }
    return out;
  }
}

function entryOf(streamId: string, fields: string[]): RequestLogEntry {
  const at = fields.indexOf('e');
  const record = JSON.parse(at >= 0 ? (fields[at + 1] ?? '{}') : '{}') as RequestLogRecord;
  return { id: entryIdOf(streamId), ...record };
}
