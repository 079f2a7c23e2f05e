import type { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
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
 * Two Redis streams, `tessera:detokenizations` and `tessera:detokenizations:merchant:<id>`, written
 * in one MULTI with XADD MAXLEN ~ (Redis trims whole nodes, cheaply, so a stream may hold a few
 * more than maxEntries). Stream ids are time-ordered, so XREVRANGE reads newest first.
 */
export class RedisDetokenizationLog implements DetokenizationLog {
  constructor(
    private readonly redis: Redis,
    private readonly maxEntries: number,
  ) {}

  async append(record: DetokenizationRecord): Promise<void> {
    const line = JSON.stringify(record);
    try {
      const results = await this.redis
        .multi()
        .xadd(ALL, 'MAXLEN', '~', this.maxEntries, '*', 'entry', line)
        .xadd(MERCHANT_PREFIX + record.merchantId, 'MAXLEN', '~', this.maxEntries, '*', 'entry', line)
        .exec();
      const failed = results?.find(([err]) => err !== null);
      if (results === null || failed) throw failed?.[0] ?? new Error('audit transaction aborted');
    } catch (err) {
      throw new TesseraError('service_unavailable', { cause: err });
    }
  }

  async list(options: { merchantId?: string; limit: number }): Promise<DetokenizationRecord[]> {
    const key = options.merchantId === undefined ? ALL : MERCHANT_PREFIX + options.merchantId;
    try {
      const entries = await this.redis.xrevrange(key, '+', '-', 'COUNT', options.limit);
      return entries.map(([, fields]) => JSON.parse(fields[1] ?? 'null') as DetokenizationRecord).filter((e) => e !== null);
    } catch (err) {
      throw new TesseraError('service_unavailable', { cause: err });
    }
  }
}
