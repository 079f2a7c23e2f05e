import type { Redis } from 'ioredis';
import { redisUnavailable } from '@tessera/common/redis';
import { merchantSlot } from '../domain/slots';
import type { DetokenizationRecord } from '../domain/detokenizationAudit';
import { compareStreamIds } from './requestLogStore';

/** Capped, newest first; `merchantId` narrows to one merchant's entries. */
export interface DetokenizationLog {
  append(record: DetokenizationRecord): Promise<void>;
  list(options: { merchantId?: string; limit: number }): Promise<DetokenizationRecord[]>;
}

export const DETOKENIZATIONS_PREFIX = 'tessera:detokenizations:';
/** A merchant's entries, in its slot (domain/slots.ts), so an audited /v1/proxy call needs no other master. */
const merchantLogKey = (merchantId: string): string => DETOKENIZATIONS_PREFIX + merchantSlot(merchantId);

/**
 * A Redis stream per merchant, `tessera:detokenizations:{m:<merchantId>}`, written with XADD
 * MAXLEN ~ (Redis trims whole nodes, cheaply, so a stream may hold a few more than maxEntries).
 * Stream ids are time-ordered, so XREVRANGE reads newest first. There is no stream of all
 * merchants: it would put one master on every audited call. The platform-wide view merges the
 * newest `limit` of every merchant that has API keys (`merchants`), newest first.
 */
export class RedisDetokenizationLog implements DetokenizationLog {
  constructor(
    private readonly redis: Redis,
    private readonly maxEntries: number,
    private readonly merchants: () => Promise<string[]>,
  ) {}

  /**
   * Issued on the event loop's next check phase, not at once: the route appends when the PSP has
   * answered, and the request log entry of the same call is only recorded once the answer went
   * out, to be written on that check phase (the gateway's app/requestLog.ts). Queued there together, both
   * leave in one auto-pipelined write and come back in one reply instead of two of each. Still
   * awaited and reported like any write: deferring it drops nothing.
   */
  async append(record: DetokenizationRecord): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      await this.redis.xadd(merchantLogKey(record.merchantId), 'MAXLEN', '~', this.maxEntries, '*', 'entry', JSON.stringify(record));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async list(options: { merchantId?: string; limit: number }): Promise<DetokenizationRecord[]> {
    try {
      const merchants = options.merchantId === undefined ? await this.merchants() : [options.merchantId];
      const streams = await Promise.all(merchants.map((m) => this.redis.xrevrange(merchantLogKey(m), '+', '-', 'COUNT', options.limit)));
      return streams
        .flat()
        .sort(([a], [b]) => compareStreamIds(b, a))
        .slice(0, options.limit)
        .map(([, fields]) => JSON.parse(fields[1] ?? 'null') as DetokenizationRecord)
        .filter((e) => e !== null);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
