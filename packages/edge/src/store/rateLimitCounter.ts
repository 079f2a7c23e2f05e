import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable as unavailable } from '@tessera/common/redis';

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
  /** Takes back one hit of the bucket's open window; nothing when the window has closed meanwhile. */
  unhit(bucket: string): Promise<void>;
}

/** Where the Redis counters live; the key store's lookup peeks at failed-auth counters here too. */
export const RATE_LIMIT_KEY_PREFIX = 'tessera:ratelimit:';

/**
 * Lua: INCR and the window's expiry in one script, so a crash between the two can never leave a
 * counter that blocks forever (the INCR+PEXPIRE race of the naive version). Also part of the key
 * store's lookup script.
 */
export const HIT_WINDOW_LUA = `
local function hitWindow(key, windowMs)
  local count = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, windowMs); ttl = tonumber(windowMs) end
  return {count, ttl}
end`;

const HIT_SCRIPT = `${HIT_WINDOW_LUA}
return hitWindow(KEYS[1], ARGV[1])`;

/** Only an open window is decremented: a DECR after it closed would start a counter that never expires. */
const UNHIT_SCRIPT = `
if redis.call('PTTL', KEYS[1]) > 0 then redis.call('DECR', KEYS[1]) end
return 1`;

/** Lua: a counter's window as {count, ttl}, {0, 0} when it has none; also part of the key store's lookup script. */
export const PEEK_WINDOW_LUA = `
local function peekWindow(key)
  local count = redis.call('GET', key)
  if not count then return {0, 0} end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then ttl = 0 end
  return {tonumber(count), ttl}
end`;

const PEEK_SCRIPT = `${PEEK_WINDOW_LUA}
return peekWindow(KEYS[1])`;

/** The scripts as commands of the client (see defineScripts in @tessera/common). */
interface CounterScripts {
  tesseraRateLimitHit(key: string, windowMs: string): Promise<[number, number]>;
  tesseraRateLimitPeek(key: string): Promise<[number, number]>;
  tesseraRateLimitUnhit(key: string): Promise<number>;
}

export class RedisRateLimitCounter implements RateLimitCounter {
  private readonly scripts: CounterScripts;

  constructor(redis: Redis) {
    this.scripts = defineScripts<CounterScripts>(redis, {
      tesseraRateLimitHit: { numberOfKeys: 1, lua: HIT_SCRIPT },
      tesseraRateLimitPeek: { numberOfKeys: 1, lua: PEEK_SCRIPT },
      tesseraRateLimitUnhit: { numberOfKeys: 1, lua: UNHIT_SCRIPT },
    });
  }

  async hit(bucket: string, windowMs: number): Promise<WindowCount> {
    try {
      const [count, ttl] = await this.scripts.tesseraRateLimitHit(RATE_LIMIT_KEY_PREFIX + bucket, String(windowMs));
      return { count, resetInMs: ttl };
    } catch (err) {
      throw unavailable(err);
    }
  }

  async peek(bucket: string): Promise<WindowCount> {
    try {
      const [count, ttl] = await this.scripts.tesseraRateLimitPeek(RATE_LIMIT_KEY_PREFIX + bucket);
      return { count, resetInMs: ttl };
    } catch (err) {
      throw unavailable(err);
    }
  }

  async unhit(bucket: string): Promise<void> {
    try {
      await this.scripts.tesseraRateLimitUnhit(RATE_LIMIT_KEY_PREFIX + bucket);
    } catch (err) {
      throw unavailable(err);
    }
  }
}
