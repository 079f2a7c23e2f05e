import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable } from '@tessera/common/redis';
import { FORM_SESSION_RETENTION_MS, type FormSessionRecord, type FormSessionResult } from '../domain/formSessions';

export type FinishOutcome = 'finished' | 'not_open' | 'expired' | 'missing';

export interface FormSessionStore {
  create(record: FormSessionRecord): Promise<void>;
  get(id: string): Promise<FormSessionRecord | undefined>;
  /**
   * Moves an open, unexpired session to completed or canceled, once: of two concurrent
   * submissions exactly one gets `finished` (single use is decided here, atomically).
   */
  finish(id: string, status: 'completed' | 'canceled', result: FormSessionResult | null, now: Date): Promise<FinishOutcome>;
}

/** Kept readable for FORM_SESSION_RETENTION_MS after expiry, so a late reader learns `expired`, not "unknown". */
function retentionMs(record: FormSessionRecord, now: Date): number {
  return Math.max(1000, Date.parse(record.expiresAt) - now.getTime() + FORM_SESSION_RETENTION_MS);
}

const PREFIX = 'tessera:form-session:';

interface FormSessionCommands {
  /** KEYS[1] the session hash; ARGV: status, finishedAt, result JSON, now ms. 1 finished, 0 not open, -1 expired, -2 missing. */
  formSessionFinish(key: string, status: string, finishedAt: string, result: string, nowMs: number): Promise<number>;
}

/** Compare-and-set on the status field: the one place a session stops being open. */
const FINISH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('HGET', KEYS[1], 'status') ~= 'open' then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'expiresAtMs')) <= tonumber(ARGV[4]) then return -1 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'finishedAt', ARGV[2], 'result', ARGV[3])
return 1
`;

const OUTCOMES: Record<number, FinishOutcome> = { 1: 'finished', 0: 'not_open', [-1]: 'expired', [-2]: 'missing' };

/**
 * Layout: `tessera:form-session:<id>`, a hash: `record` (the fixed fields, JSON), `status`,
 * `finishedAt`, `result` (JSON) and `expiresAtMs`; it expires FORM_SESSION_RETENTION_MS after the
 * session does. In a Redis Cluster it hashes by its own name, so sessions spread over the slots.
 * Failures are service_unavailable: a page that cannot read its session must not guess.
 */
export class RedisFormSessionStore implements FormSessionStore {
  private readonly commands: FormSessionCommands;

  constructor(
    private readonly redis: Redis,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.commands = defineScripts<FormSessionCommands>(redis, { formSessionFinish: { numberOfKeys: 1, lua: FINISH } });
  }

  async create(record: FormSessionRecord): Promise<void> {
    const { status, finishedAt, result, ...fixed } = record;
    try {
      await this.redis
        .multi()
        .hset(PREFIX + record.id, {
          record: JSON.stringify(fixed),
          status,
          finishedAt: finishedAt ?? '',
          result: result === null ? '' : JSON.stringify(result),
          expiresAtMs: String(Date.parse(record.expiresAt)),
        })
        .pexpire(PREFIX + record.id, retentionMs(record, this.now()))
        .exec();
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
    const fixed = JSON.parse(fields.record) as Omit<FormSessionRecord, 'status' | 'finishedAt' | 'result'>;
    const status = fields.status === 'completed' || fields.status === 'canceled' ? fields.status : 'open';
    return {
      ...fixed,
      status,
      finishedAt: fields.finishedAt ? fields.finishedAt : null,
      result: fields.result ? (JSON.parse(fields.result) as FormSessionResult) : null,
    };
  }

  async finish(id: string, status: 'completed' | 'canceled', result: FormSessionResult | null, now: Date): Promise<FinishOutcome> {
    try {
      const code = await this.commands.formSessionFinish(
        PREFIX + id,
        status,
        now.toISOString(),
        result === null ? '' : JSON.stringify(result),
        now.getTime(),
      );
      return OUTCOMES[Number(code)] ?? 'missing';
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
