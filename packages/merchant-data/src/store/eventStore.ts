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
interface EventCommands {
  /** KEYS: mark, record, index, type index, stream; ARGV: retention ms, JSON, created ms, id, cutoff ms, stream max length, mark ms. 1 recorded, 0 marked before. */
  eventRecordOnce(
    mark: string,
    record: string,
    index: string,
    typeIndex: string,
    stream: string,
    retentionMs: number,
    json: string,
    createdMs: number,
    id: string,
    cutoffMs: number,
    maxLength: number,
    markMs: number,
  ): Promise<number>;
}

// The same writes as record()'s MULTI, behind the mark: all keys share the merchant's slot.
const RECORD_ONCE = `
if redis.call('SET', KEYS[1], ARGV[4], 'NX', 'PX', ARGV[7]) == false then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1])
for i = 3, 4 do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[5])
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
end
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[6], '*', 'event', ARGV[2])
return 1
`;

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
    this.commands = defineScripts<EventCommands>(redis, { eventRecordOnce: { numberOfKeys: 5, lua: RECORD_ONCE } });
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

  async record(event: EventRecord): Promise<void> {
    const base = this.base(event.merchantId);
    const recordedMs = this.nextScore();
    const cutoff = recordedMs - this.retentionMs;
    const json = JSON.stringify(event);
    const tx = this.redis.multi().set(`${base}evt:${event.id}`, json, 'PX', this.retentionMs);
    for (const index of [this.indexKey(event.merchantId, event.mode), this.indexKey(event.merchantId, event.mode, event.type)]) {
      tx.zadd(index, recordedMs, event.id).zremrangebyscore(index, '-inf', cutoff).pexpire(index, this.retentionMs);
    }
    tx.xadd(`${base}stream`, 'MAXLEN', '~', STREAM_MAX_LENGTH, '*', 'event', json);
    const results = await tx.exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw new Error('event could not be recorded');
  }

  async recordOnce(event: EventRecord, once: string, markForMs = 0): Promise<boolean> {
    const base = this.base(event.merchantId);
    const recorded = await this.commands.eventRecordOnce(
      `${base}once:${event.mode}:${once}`,
      `${base}evt:${event.id}`,
      this.indexKey(event.merchantId, event.mode),
      this.indexKey(event.merchantId, event.mode, event.type),
      `${base}stream`,
      this.retentionMs,
      JSON.stringify(event),
      this.nextScore(),
      event.id,
      this.nowMs() - this.retentionMs,
      STREAM_MAX_LENGTH,
      Math.max(this.retentionMs, Math.ceil(markForMs)),
    );
    return Number(recorded) === 1;
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
    const ids = await this.redis.zrevrange(index, start, start + query.limit);
    const hasMore = ids.length > query.limit;
    const page = ids.slice(0, query.limit);
    if (page.length === 0) return { data: [], hasMore: false };
    const jsons = await this.redis.mget(page.map((id) => `${this.base(merchantId)}evt:${id}`));
    const data = jsons.filter((json): json is string => json !== null).map((json) => JSON.parse(json) as EventRecord);
    return { data, hasMore };
  }
}
