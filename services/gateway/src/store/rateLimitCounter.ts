import type { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';

/** A fixed-window counter: how many hits the bucket has had in its current window, and when that window ends. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/**
 * Counters behind the API rate limits (per API key, per client IP on failed authentication).
 * The Redis implementation is shared by every gateway replica and worker; the memory one is for
 * a single development process. Both throw TesseraError('service_unavailable') when they cannot
 * answer; the limiter decides to fail open.
 */
export interface RateLimitCounter {
  /** Counts one hit; the first hit of a bucket starts its window. */
  hit(bucket: string, windowMs: number): Promise<WindowCount>;
  /** The bucket's count without adding to it (0 when it has no open window). */
  peek(bucket: string): Promise<WindowCount>;
}

const PREFIX = 'tessera:ratelimit:';

/**
 * INCR and the window's expiry in one script, so a crash between the two can never leave a
 * counter that blocks forever (the INCR+PEXPIRE race of the naive version).
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

const PEEK_SCRIPT = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(count), ttl}`;

function unavailable(err: unknown): TesseraError {
  return err instanceof TesseraError ? err : new TesseraError('service_unavailable', { cause: err });
}

export class RedisRateLimitCounter implements RateLimitCounter {
  constructor(private readonly redis: Redis) {}

  async hit(bucket: string, windowMs: number): Promise<WindowCount> {
    try {
      const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, PREFIX + bucket, String(windowMs))) as [number, number];
      return { count, resetInMs: ttl };
    } catch (err) {
      throw unavailable(err);
    }
  }

  async peek(bucket: string): Promise<WindowCount> {
    try {
      const [count, ttl] = (await this.redis.eval(PEEK_SCRIPT, 1, PREFIX + bucket)) as [number, number];
      return { count, resetInMs: ttl };
    } catch (err) {
      throw unavailable(err);
    }
  }
}

/**
 * One process's counters. Expired windows are swept once the map grows, and the map is capped,
 * so a client spraying failed requests from many (IPv6) addresses cannot exhaust memory.
 */
export class MemoryRateLimitCounter implements RateLimitCounter {
  private readonly windows = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly maxBuckets = 100_000,
  ) {}

  private sweep(now: number): void {
    for (const [bucket, entry] of this.windows) if (entry.until <= now) this.windows.delete(bucket);
    // Still full: drop the oldest windows (Map keeps insertion order), which forgets their counts.
    for (const bucket of this.windows.keys()) {
      if (this.windows.size < this.maxBuckets) break;
      this.windows.delete(bucket);
    }
  }

  async hit(bucket: string, windowMs: number): Promise<WindowCount> {
    const now = this.clock();
    let entry = this.windows.get(bucket);
    if (!entry || entry.until <= now) {
      if (this.windows.size >= this.maxBuckets) this.sweep(now);
      this.windows.delete(bucket);
      entry = { count: 0, until: now + windowMs };
      this.windows.set(bucket, entry);
    }
    entry.count++;
    return { count: entry.count, resetInMs: entry.until - now };
  }

  async peek(bucket: string): Promise<WindowCount> {
    const now = this.clock();
    const entry = this.windows.get(bucket);
    if (!entry || entry.until <= now) return { count: 0, resetInMs: 0 };
    return { count: entry.count, resetInMs: entry.until - now };
  }
}
