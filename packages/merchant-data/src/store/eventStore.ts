import type { Redis } from 'ioredis';
import { defineScripts } from '@tessera/common/redis';
import type { EventType } from '../domain/eventTypes';
import type { EventRecord } from '../domain/events';

export const DEFAULT_EVENT_RETENTION_DAYS = 30;
/** Far above what retention needs, so a future delivery consumer group never loses an entry to trimming. */
const STREAM_MAX_LENGTH = 1_000_000;

export interface EventListQuery {
  type?: EventType;
  limit: number;
  startingAfter?: string;
}

export interface EventStore {
  record(event: EventRecord): Promise<void>;
  /**
   * Records `event` unless an event was already recorded under `once` (the object and threshold
   * it is about, e.g. `form_session.expired:fs_…`): true if recorded now. The mark and the event
   * are written in one script, so a sweep retried after a crash, or run by two replicas, records
   * each event once. The mark lasts as long as events are kept, or `markForMs` if longer: a sweep
   * that sees the same object over a longer window (N days before a card's expiry) passes it.
   */
  recordOnce(event: EventRecord, once: string, markForMs?: number): Promise<boolean>;
  get(merchantId: string, mode: EventRecord['mode'], id: string): Promise<EventRecord | undefined>;
  /** Newest first; `limit` + 1 read so the caller learns `hasMore`. */
  list(merchantId: string, mode: EventRecord['mode'], query: EventListQuery): Promise<{ data: EventRecord[]; hasMore: boolean }>;
}

/**
 * Keys share the merchant's slot (`{m:<merchantId>}`), so the record, its indexes and the stream
 * entry are written in one MULTI: an event listed is an event a delivery consumer will see.
 */
type RecordArgs = [
  retentionMs: number,
  json: string,
  scoreMs: number,
  id: string,
  cutoffMs: number,
  maxLength: number,
  markMs: number,
  trim: 0 | 1,
];

interface EventCommands {
  /** KEYS: record, index, type index, stream; ARGV: RecordArgs. */
  eventRecord(record: string, index: string, typeIndex: string, stream: string, ...args: RecordArgs): Promise<number>;
  /** KEYS: mark, then eventRecord's; ARGV: RecordArgs. 1 recorded, 0 marked before. */
  eventRecordOnce(mark: string, record: string, index: string, typeIndex: string, stream: string, ...args: RecordArgs): Promise<number>;
}

/**
 * The record, its two indexes and the stream entry, in one script (all keys share the merchant's
 * slot): an event listed is an event a delivery consumer will see. One command, not a MULTI of
 * eight: recording is on the path of every tokenize. Indexes are trimmed of expired ids only now
 * and then (`trim`): a trim is O(log N + M), and list() reads only ids within retention.
 */
const recordWrites = (first: number) => `
redis.call('SET', KEYS[${first}], ARGV[2], 'PX', ARGV[1])
for i = ${first + 1}, ${first + 2} do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[4])
  if ARGV[8] == '1' then redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[5]) end
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
end
redis.call('XADD', KEYS[${first + 3}], 'MAXLEN', '~', ARGV[6], '*', 'event', ARGV[2])
return 1
`;
const RECORD = recordWrites(1);
const RECORD_ONCE = `if redis.call('SET', KEYS[1], ARGV[4], 'NX', 'PX', ARGV[7]) == false then return 0 end${recordWrites(2)}`;

/** One record in this many trims its indexes of ids past retention. */
const TRIM_ONE_IN = 32;

export class RedisEventStore implements EventStore {
  private readonly retentionMs: number;
  private readonly commands: EventCommands;

  constructor(
    private readonly redis: Redis,
    retentionDays = DEFAULT_EVENT_RETENTION_DAYS,
    /** Milliseconds: when an event is recorded, its place in the newest-first indexes. */
    private readonly nowMs: () => number = Date.now,
  ) {
    this.retentionMs = retentionDays * 86_400_000;
    this.commands = defineScripts<EventCommands>(redis, {
      eventRecord: { numberOfKeys: 4, lua: RECORD },
      eventRecordOnce: { numberOfKeys: 5, lua: RECORD_ONCE },
    });
  }

  private lastScore = 0;

  /**
   * An event's place in the newest-first indexes: when it is recorded, in ms, strictly increasing
   * within this process (a microsecond apart at least; a double holds that exactly). `created` is
   * whole seconds, and events of one second (a token created, then deleted) would otherwise list
   * in the order of their random ids.
   */
  private nextScore(): number {
    this.lastScore = Math.max(this.nowMs(), this.lastScore + 0.001);
    return this.lastScore;
  }

  private base(merchantId: string): string {
    return `tessera:events:{m:${merchantId}}:`;
  }

  private indexKey(merchantId: string, mode: string, type?: string): string {
    return `${this.base(merchantId)}index:${mode}${type ? `:${type}` : ''}`;
  }

  private keysOf(event: EventRecord): [record: string, index: string, typeIndex: string, stream: string] {
    const base = this.base(event.merchantId);
    return [
      `${base}evt:${event.id}`,
      this.indexKey(event.merchantId, event.mode),
      this.indexKey(event.merchantId, event.mode, event.type),
      `${base}stream`,
    ];
  }

  private argsOf(event: EventRecord, markMs = 0): RecordArgs {
    const scoreMs = this.nextScore();
    const trim = Math.random() * TRIM_ONE_IN < 1 ? 1 : 0;
    return [this.retentionMs, JSON.stringify(event), scoreMs, event.id, scoreMs - this.retentionMs, STREAM_MAX_LENGTH, markMs, trim];
  }

  async record(event: EventRecord): Promise<void> {
    await this.commands.eventRecord(...this.keysOf(event), ...this.argsOf(event));
  }

  async recordOnce(event: EventRecord, once: string, markForMs = 0): Promise<boolean> {
    const mark = `${this.base(event.merchantId)}once:${event.mode}:${once}`;
    const markMs = Math.max(this.retentionMs, Math.ceil(markForMs));
    return Number(await this.commands.eventRecordOnce(mark, ...this.keysOf(event), ...this.argsOf(event, markMs))) === 1;
  }

  async get(merchantId: string, mode: EventRecord['mode'], id: string): Promise<EventRecord | undefined> {
    const json = await this.redis.get(`${this.base(merchantId)}evt:${id}`);
    if (!json) return undefined;
    const event = JSON.parse(json) as EventRecord;
    // Another mode's id answers like an unknown one.
    return event.mode === mode ? event : undefined;
  }

  async list(merchantId: string, mode: EventRecord['mode'], query: EventListQuery): Promise<{ data: EventRecord[]; hasMore: boolean }> {
    const index = this.indexKey(merchantId, mode, query.type);
    let start = 0;
    if (query.startingAfter) {
      const rank = await this.redis.zrevrank(index, query.startingAfter);
      if (rank === null) return { data: [], hasMore: false };
      start = rank + 1;
    }
    // Ids past retention that no trim has dropped yet sit at the old end: never listed.
    const ids = await this.redis.zrevrangebyscore(index, '+inf', this.nowMs() - this.retentionMs, 'LIMIT', start, query.limit + 1);
    const hasMore = ids.length > query.limit;
    const page = ids.slice(0, query.limit);
    if (page.length === 0) return { data: [], hasMore: false };
    const jsons = await this.redis.mget(page.map((id) => `${this.base(merchantId)}evt:${id}`));
    const data = jsons.filter((json): json is string => json !== null).map((json) => JSON.parse(json) as EventRecord);
    return { data, hasMore };
  }
}
