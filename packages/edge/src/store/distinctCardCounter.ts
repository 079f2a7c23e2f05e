import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable } from '@tessera/common/redis';
import { RATE_LIMIT_KEY_PREFIX } from './rateLimitCounter';

/** One card's admission into a bucket's window of distinct cards. */
export interface CardAdmission {
  admitted: boolean;
  /** Distinct cards in the window after this one (not counting a refused card). */
  distinct: number;
  /** When the window ends (the first card of a window starts it). */
  resetInMs: number;
}

/**
 * Distinct cards per bucket per window, for the card-testing limit. It holds card fingerprints
 * (keyed hashes, see domain/browserLimits.ts), never card numbers, and at most `limit` of them
 * per bucket: a refused card is not added, so a client sending thousands of cards costs a set of
 * `limit` entries. Throws TesseraError('service_unavailable') when it cannot answer; the limiter
 * decides to fail open.
 */
export interface DistinctCardCounter {
  admit(bucket: string, fingerprint: string, limit: number, windowMs: number): Promise<CardAdmission>;
}

/**
 * isNewCardOverLimit (domain/browserLimits.ts) in Lua, so the membership test, the count and the add are one step for
 * every gateway replica (two requests racing cannot both take the last place). The window's
 * expiry is set with the first member, in the same script, so a set never outlives its hour.
 */
const ADMIT_SCRIPT = `
local limit = tonumber(ARGV[2])
local known = redis.call('SISMEMBER', KEYS[1], ARGV[1])
local count = redis.call('SCARD', KEYS[1])
local admitted = 1
if known == 0 then
  if limit > 0 and count >= limit then admitted = 0 else redis.call('SADD', KEYS[1], ARGV[1]); count = count + 1 end
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]); ttl = tonumber(ARGV[3]) end
if ttl < 0 then ttl = 0 end
return {admitted, count, ttl}`;

interface AdmitScript {
  tesseraDistinctCardAdmit(key: string, fingerprint: string, limit: string, windowMs: string): Promise<[number, number, number]>;
}

export class RedisDistinctCardCounter implements DistinctCardCounter {
  private readonly scripts: AdmitScript;

  constructor(redis: Redis) {
    this.scripts = defineScripts<AdmitScript>(redis, { tesseraDistinctCardAdmit: { numberOfKeys: 1, lua: ADMIT_SCRIPT } });
  }

  async admit(bucket: string, fingerprint: string, limit: number, windowMs: number): Promise<CardAdmission> {
    try {
      const [admitted, distinct, ttl] = await this.scripts.tesseraDistinctCardAdmit(
        RATE_LIMIT_KEY_PREFIX + bucket,
        fingerprint,
        String(limit),
        String(windowMs),
      );
      return { admitted: admitted === 1, distinct, resetInMs: ttl };
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
