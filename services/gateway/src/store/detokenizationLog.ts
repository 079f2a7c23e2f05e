import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable } from '@tessera/common/redis';
import type { DetokenizationRecord } from '../domain/detokenizationAudit';

/** Capped, newest first; `merchantId` narrows to one merchant's entries. */
export interface DetokenizationLog {
  append(record: DetokenizationRecord): Promise<void>;
  list(options: { merchantId?: string; limit: number }): Promise<DetokenizationRecord[]>;
}

/** A ring per process (development): the oldest entries drop out past maxEntries. */
export class MemoryDetokenizationLog implements DetokenizationLog {
  private readonly entries: DetokenizationRecord[] = [];

  constructor(private readonly maxEntries: number) {}

  append(record: DetokenizationRecord): Promise<void> {
    this.entries.push(record);
    if (this.entries.length > this.maxEntries) this.entries.splice(0, this.entries.length - this.maxEntries);
    return Promise.resolve();
  }

  list(options: { merchantId?: string; limit: number }): Promise<DetokenizationRecord[]> {
    const matching = this.entries.filter((e) => options.merchantId === undefined || e.merchantId === options.merchantId);
    return Promise.resolve(matching.slice(-options.limit).reverse());
  }
}

const ALL = 'tessera:detokenizations';
const MERCHANT_PREFIX = 'tessera:detokenizations:merchant:';

/**
 * Both entries in one step: a script runs atomically, like MULTI, but as a single command it
 * shares a write with the other commands of the same tick (auto-pipelining) instead of costing a
 * socket write per /v1/proxy call.
 */
const APPEND_SCRIPT = `
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'entry', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'entry', ARGV[2])
return 1`;

interface AuditScripts {
  tesseraAppendDetokenization(all: string, merchant: string, maxEntries: number, line: string): Promise<unknown>;
}

/**
 * Two Redis streams, `tessera:detokenizations` and `tessera:detokenizations:merchant:<id>`, written
 * together with XADD MAXLEN ~ (Redis trims whole nodes, cheaply, so a stream may hold a few more
 * than maxEntries). Stream ids are time-ordered, so XREVRANGE reads newest first.
 */
export class RedisDetokenizationLog implements DetokenizationLog {
  private readonly scripts: AuditScripts;

  constructor(
    private readonly redis: Redis,
    private readonly maxEntries: number,
  ) {
    this.scripts = defineScripts<AuditScripts>(redis, { tesseraAppendDetokenization: { numberOfKeys: 2, lua: APPEND_SCRIPT } });
  }

  /**
   * Issued on the event loop's next check phase, not at once: the route appends when the PSP has
   * answered, and the request log entry of the same call is only recorded once the answer went
   * out, to be written on that check phase (app/requestLog.ts). Queued there together, both
   * leave in one auto-pipelined write and come back in one reply instead of two of each. Still
   * one script per entry, awaited and reported like any write: deferring it drops nothing.
   */
  async append(record: DetokenizationRecord): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      await this.scripts.tesseraAppendDetokenization(ALL, MERCHANT_PREFIX + record.merchantId, this.maxEntries, JSON.stringify(record));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async list(options: { merchantId?: string; limit: number }): Promise<DetokenizationRecord[]> {
    const key = options.merchantId === undefined ? ALL : MERCHANT_PREFIX + options.merchantId;
    try {
      const entries = await this.redis.xrevrange(key, '+', '-', 'COUNT', options.limit);
      return entries.map(([, fields]) => JSON.parse(fields[1] ?? 'null') as DetokenizationRecord).filter((e) => e !== null);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
