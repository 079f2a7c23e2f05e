import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable } from '@tessera/common/redis';
import type { KeyMode } from '@tessera/common';
import { FORM_SESSION_RETENTION_MS, type FormSessionPayment, type FormSessionRecord, type FormSessionResult } from '../domain/formSessions';

export type FinishOutcome = 'finished' | 'not_open' | 'expired' | 'missing';

/** Why an attempt could not begin; `processing`: another card of this session is with the merchant now. */
export type BeginAttemptOutcome =
  { began: true; attempt: number } | { began: false; reason: 'not_open' | 'expired' | 'missing' | 'processing' | 'attempts_used' };

export interface FinishOptions {
  /**
   * The attempt that ends the session (a completion call's succeeded or unknown outcome): allowed
   * only while that attempt is the one in flight, and also past the session's expiry (the
   * merchant was called before it). Without it, the session must have no attempt in flight, so a
   * cancel never races a charge.
   */
  attempt?: number;
  payment?: FormSessionPayment;
}

export interface FormSessionStore {
  create(record: FormSessionRecord): Promise<void>;
  get(id: string): Promise<FormSessionRecord | undefined>;
  /**
   * Moves an open, unexpired session to completed or canceled, once: of two concurrent
   * submissions exactly one gets `finished` (single use is decided here, atomically).
   */
  finish(
    id: string,
    status: 'completed' | 'canceled',
    result: FormSessionResult | null,
    now: Date,
    options?: FinishOptions,
  ): Promise<FinishOutcome>;
  /**
   * Marks the next card of an open session as in flight to the merchant's completion URL, once:
   * of two concurrent submissions one begins, the other is told `processing`. At most `maxAttempts`.
   */
  beginAttempt(id: string, maxAttempts: number, now: Date): Promise<BeginAttemptOutcome>;
  /** The merchant declined `attempt`: the session stays open for another card. False if that attempt is not in flight. */
  settleDeclined(id: string, attempt: number, declineMessage: string): Promise<boolean>;
  /**
   * The merchant's sessions of one mode, newest first, after `startingAfter` (an id of the
   * list); `count` at most. A session that is no longer stored is skipped (and dropped from the index).
   */
  listPage(merchantId: string, mode: KeyMode, startingAfter: string | undefined, count: number): Promise<FormSessionRecord[]>;
  /**
   * Sessions whose expiry has passed by `now` and that no sweep has forgotten yet, oldest expiry
   * first, `count` at most (the events sweep: form_session.expired, and the completed event's
   * backstop). Ids whose session is gone are forgotten on the way.
   */
  dueForSweep(now: Date, count: number): Promise<FormSessionRecord[]>;
  /** Drops sessions from the sweep's index once their events are recorded. */
  forgetSwept(ids: readonly string[]): Promise<void>;
}

/** Kept readable for FORM_SESSION_RETENTION_MS after expiry, so a late reader learns `expired`, not "unknown". */
function retentionMs(record: FormSessionRecord, now: Date): number {
  return Math.max(1000, Date.parse(record.expiresAt) - now.getTime() + FORM_SESSION_RETENTION_MS);
}

const PREFIX = 'tessera:form-session:';
/**
 * A merchant's sessions of one mode, a sorted set of ids by creation time (ms); ids begin with
 * `fs_`, so no session's key is ever named like an index.
 */
const indexKey = (merchantId: string, mode: KeyMode): string => `${PREFIX}index:${mode}:${merchantId}`;
/**
 * Every session by its expiry (ms), for the events sweep: an expired session is noticed without
 * keyspace notifications, and a session is listed here until a sweep has recorded its events.
 */
export const FORM_SESSION_EXPIRY_INDEX = `${PREFIX}expiry`;
/** Index entries older than this are dropped when a session is added (their sessions are long gone). */
const INDEX_HORIZON_MS = 30 * 24 * 3600 * 1000;

interface FormSessionCommands {
  /**
   * KEYS[1] the session hash; ARGV: status, finishedAt, result JSON, now ms, attempt ('' for none),
   * payment JSON ('' to leave it). 1 finished, 0 not open, -1 expired, -2 missing.
   */
  formSessionFinish(
    key: string,
    status: string,
    finishedAt: string,
    result: string,
    nowMs: number,
    attempt: string,
    payment: string,
  ): Promise<number>;
  /** KEYS[1] the session hash; ARGV: max attempts, now ms. The attempt number, or -2 missing, 0 not open, -1 expired, -3 processing, -4 attempts used. */
  formSessionBeginAttempt(key: string, maxAttempts: number, nowMs: number): Promise<number>;
  /** KEYS[1] the session hash; ARGV: attempt, payment JSON. 1 settled, 0 not that attempt in flight. */
  formSessionSettleDeclined(key: string, attempt: string, payment: string): Promise<number>;
}

/**
 * Compare-and-set on the status field: the one place a session stops being open. An attempt in
 * flight (`inFlight`) may end it only as that attempt, and even past expiry: the merchant was
 * called before, and what it answered must be kept.
 */
const FINISH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('HGET', KEYS[1], 'status') ~= 'open' then return 0 end
local inFlight = redis.call('HGET', KEYS[1], 'inFlight') or ''
if inFlight ~= ARGV[5] then return 0 end
if ARGV[5] == '' and tonumber(redis.call('HGET', KEYS[1], 'expiresAtMs')) <= tonumber(ARGV[4]) then return -1 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'finishedAt', ARGV[2], 'result', ARGV[3], 'inFlight', '')
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'payment', ARGV[6]) end
return 1
`;

/** One card at a time goes to the merchant: the attempt counter and the in-flight mark move together. */
const BEGIN_ATTEMPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('HGET', KEYS[1], 'status') ~= 'open' then return 0 end
if (redis.call('HGET', KEYS[1], 'inFlight') or '') ~= '' then return -3 end
if tonumber(redis.call('HGET', KEYS[1], 'expiresAtMs')) <= tonumber(ARGV[2]) then return -1 end
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
if attempts >= tonumber(ARGV[1]) then return -4 end
attempts = attempts + 1
redis.call('HSET', KEYS[1], 'attempts', tostring(attempts), 'inFlight', tostring(attempts))
return attempts
`;

const SETTLE_DECLINED = `
if (redis.call('HGET', KEYS[1], 'inFlight') or '') ~= ARGV[1] or ARGV[1] == '' then return 0 end
redis.call('HSET', KEYS[1], 'inFlight', '', 'payment', ARGV[2])
return 1
`;

const OUTCOMES: Record<number, FinishOutcome> = { 1: 'finished', 0: 'not_open', [-1]: 'expired', [-2]: 'missing' };
const NOT_BEGUN: Record<number, Exclude<BeginAttemptOutcome, { began: true }>['reason']> = {
  0: 'not_open',
  [-1]: 'expired',
  [-2]: 'missing',
  [-3]: 'processing',
  [-4]: 'attempts_used',
};

/** The payment as a reader sees it: stored outcome, or `processing` while an attempt is in flight. */
function paymentOf(fields: Record<string, string>): FormSessionPayment | null {
  const attempts = Number(fields.attempts ?? '0');
  if (fields.inFlight) return { status: 'processing', attempts, declineMessage: null };
  return fields.payment ? (JSON.parse(fields.payment) as FormSessionPayment) : null;
}

/**
 * Layout: `tessera:form-session:<id>`, a hash: `record` (the fixed fields, JSON), `status`,
 * `finishedAt`, `result` (JSON), `expiresAtMs`, and for payments `attempts`, `inFlight` (the
 * attempt with the merchant now, or empty) and `payment` (JSON); it expires
 * FORM_SESSION_RETENTION_MS after the session does. `tessera:form-session:index:<mode>:<merchant>`
 * lists a merchant's sessions (GET /v1/form-sessions); `tessera:form-session:expiry` every session by
 * expiry until the events sweep has seen it. In a Redis Cluster it hashes by its own name, so sessions spread over the slots.
 * Failures are service_unavailable: a page that cannot read its session must not guess.
 */
export class RedisFormSessionStore implements FormSessionStore {
  private readonly commands: FormSessionCommands;

  constructor(
    private readonly redis: Redis,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.commands = defineScripts<FormSessionCommands>(redis, {
      formSessionFinish: { numberOfKeys: 1, lua: FINISH },
      formSessionBeginAttempt: { numberOfKeys: 1, lua: BEGIN_ATTEMPT },
      formSessionSettleDeclined: { numberOfKeys: 1, lua: SETTLE_DECLINED },
    });
  }

  async create(record: FormSessionRecord): Promise<void> {
    const { status, finishedAt, result, payment: _payment, ...fixed } = record;
    const now = this.now();
    const retention = retentionMs(record, now);
    const index = indexKey(record.merchantId, record.mode);
    try {
      await this.redis
        .multi()
        .hset(PREFIX + record.id, {
          record: JSON.stringify(fixed),
          status,
          finishedAt: finishedAt ?? '',
          result: result === null ? '' : JSON.stringify(result),
          expiresAtMs: String(Date.parse(record.expiresAt)),
          attempts: '0',
          inFlight: '',
          payment: '',
        })
        .pexpire(PREFIX + record.id, retention)
        .exec();
      // The index is another key (another slot in a Cluster), so not in the transaction: an entry
      // without its session is skipped by listPage; a session without its entry is only unlisted.
      // It lives as long as its newest session.
      await this.redis
        .multi()
        .zadd(index, Date.parse(record.createdAt), record.id)
        .zremrangebyscore(index, '-inf', now.getTime() - INDEX_HORIZON_MS)
        .pexpire(index, retention)
        .exec();
      await this.redis.zadd(FORM_SESSION_EXPIRY_INDEX, Date.parse(record.expiresAt), record.id);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async listPage(merchantId: string, mode: KeyMode, startingAfter: string | undefined, count: number): Promise<FormSessionRecord[]> {
    const index = indexKey(merchantId, mode);
    try {
      let start = 0;
      if (startingAfter !== undefined) {
        const rank = await this.redis.zrevrank(index, startingAfter);
        if (rank === null) return [];
        start = rank + 1;
      }
      const ids = await this.redis.zrevrange(index, start, start + count - 1);
      const records = await Promise.all(ids.map((id) => this.get(id)));
      const gone = ids.filter((_, i) => records[i] === undefined);
      if (gone.length > 0) await this.redis.zrem(index, ...gone);
      return records.filter((r): r is FormSessionRecord => r !== undefined);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async dueForSweep(now: Date, count: number): Promise<FormSessionRecord[]> {
    try {
      const ids = await this.redis.zrangebyscore(FORM_SESSION_EXPIRY_INDEX, '-inf', now.getTime(), 'LIMIT', 0, count);
      const records = await Promise.all(ids.map((id) => this.get(id)));
      const gone = ids.filter((_, i) => records[i] === undefined);
      if (gone.length > 0) await this.redis.zrem(FORM_SESSION_EXPIRY_INDEX, ...gone);
      return records.filter((r): r is FormSessionRecord => r !== undefined);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async forgetSwept(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.redis.zrem(FORM_SESSION_EXPIRY_INDEX, ...ids);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async beginAttempt(id: string, maxAttempts: number, now: Date): Promise<BeginAttemptOutcome> {
    try {
      const code = Number(await this.commands.formSessionBeginAttempt(PREFIX + id, maxAttempts, now.getTime()));
      return code > 0 ? { began: true, attempt: code } : { began: false, reason: NOT_BEGUN[code] ?? 'missing' };
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async settleDeclined(id: string, attempt: number, declineMessage: string): Promise<boolean> {
    const payment: FormSessionPayment = { status: 'declined', attempts: attempt, declineMessage };
    try {
      return Number(await this.commands.formSessionSettleDeclined(PREFIX + id, String(attempt), JSON.stringify(payment))) === 1;
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async get(id: string): Promise<FormSessionRecord | undefined> {
    let fields: Record<string, string>;
    try {
      fields = await this.redis.hgetall(PREFIX + id);
    } catch (err) {
      throw redisUnavailable(err);
    }
    if (fields.record === undefined) return undefined;
    const fixed = JSON.parse(fields.record) as Omit<FormSessionRecord, 'status' | 'finishedAt' | 'result' | 'payment'>;
    const status = fields.status === 'completed' || fields.status === 'canceled' ? fields.status : 'open';
    return {
      ...fixed,
      status,
      finishedAt: fields.finishedAt ? fields.finishedAt : null,
      result: fields.result ? (JSON.parse(fields.result) as FormSessionResult) : null,
      payment: paymentOf(fields),
    };
  }

  async finish(
    id: string,
    status: 'completed' | 'canceled',
    result: FormSessionResult | null,
    now: Date,
    options: FinishOptions = {},
  ): Promise<FinishOutcome> {
    try {
      const code = await this.commands.formSessionFinish(
        PREFIX + id,
        status,
        now.toISOString(),
        result === null ? '' : JSON.stringify(result),
        now.getTime(),
        options.attempt === undefined ? '' : String(options.attempt),
        options.payment === undefined ? '' : JSON.stringify(options.payment),
      );
      return OUTCOMES[Number(code)] ?? 'missing';
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
