import type { Logger } from '@tessera/common';
import { apiKeyBucket, failedAuthBucket, isOverLimit, rateLimitRefusal, type RateLimitRefusal } from '../domain/rateLimit';
import type { RateLimitCounter, WindowCount } from '../store/rateLimitCounter';
import { failOpen, type FailOpen } from './failOpen';

export interface RateLimitConfig {
  /** Requests per API key per one-second window; 0 disables. */
  RATE_LIMIT_PER_KEY_PER_SECOND: number;
  /** Failed authentications (401) per client IP (IPv6: per /64) per one-minute window; 0 disables. */
  RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: number;
  /** How long a request waits for a counter before going through as if under the limit; absent: no deadline of its own. */
  RATE_LIMIT_STORE_TIMEOUT_MS?: number | undefined;
}

/** What names a key's bucket: its id, in its merchant's slot. */
type KeyOfBucket = Parameters<typeof apiKeyBucket>[0];

const SECOND_MS = 1_000;
const MINUTE_MS = 60_000;

/** The API rate limits. Both fail open when the counter store cannot answer (failOpen). */
export class RateLimiter {
  private readonly count: FailOpen;

  constructor(
    private readonly counter: RateLimitCounter,
    private readonly config: RateLimitConfig,
    logger: Logger,
  ) {
    this.count = failOpen(logger, 'rate limit store unavailable: limits are not enforced (failing open)', {
      deadlineMs: config.RATE_LIMIT_STORE_TIMEOUT_MS,
    });
  }

  /**
   * Resolves to the error to answer when this client has already failed authentication too often
   * in the current window. Checked before the key decision, so a blocked client learns nothing
   * more about keys, not even whether the next one it tries is valid.
   */
  async failedAuthBlock(clientIp: string | undefined, requestId: string): Promise<RateLimitRefusal | undefined> {
    const limit = this.config.RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE;
    if (limit <= 0) return undefined;
    const window = await this.count(() => this.counter.peek(failedAuthBucket(clientIp)), requestId);
    return window !== undefined && window.count >= limit ? rateLimited(window, 'authentication failures') : undefined;
  }

  /** Counts a failed authentication; the error to answer instead of the 401 once the limit is passed. */
  async recordFailedAuth(clientIp: string | undefined, requestId: string): Promise<RateLimitRefusal | undefined> {
    const limit = this.config.RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE;
    if (limit <= 0) return undefined;
    const window = await this.count(() => this.counter.hit(failedAuthBucket(clientIp), MINUTE_MS), requestId);
    return window !== undefined && isOverLimit(window.count, limit) ? rateLimited(window, 'authentication failures') : undefined;
  }

  /** Counts one request of an authenticated key; the error to answer when the key is over its limit. */
  async recordKeyRequest(key: KeyOfBucket, requestId: string): Promise<RateLimitRefusal | undefined> {
    const windowMs = this.keyRequestWindowMs();
    if (windowMs === undefined) return undefined;
    const window = await this.count(() => this.counter.hit(apiKeyBucket(key), windowMs), requestId);
    return window === undefined ? undefined : this.keyRequestRefusalOf(window);
  }

  /** The per-key window, for a store that counts a key's request along with its lookup; undefined when that limit is off. */
  keyRequestWindowMs(): number | undefined {
    return this.config.RATE_LIMIT_PER_KEY_PER_SECOND > 0 ? SECOND_MS : undefined;
  }

  /** recordKeyRequest's decision on a window already counted (see keyRequestWindowMs). */
  keyRequestRefusalOf(window: WindowCount): RateLimitRefusal | undefined {
    const limit = this.config.RATE_LIMIT_PER_KEY_PER_SECOND;
    return limit > 0 && isOverLimit(window.count, limit) ? rateLimited(window, 'requests for this API key') : undefined;
  }

  /**
   * Takes back a request counted with the key's lookup that was then refused (its record passed,
   * the request did not), so that only requests passing every check use up a key's limit. Not
   * awaited by the request; a failure is logged like any store failure.
   */
  takeBackKeyRequest(key: KeyOfBucket, requestId: string): void {
    void this.count(() => this.counter.unhit(apiKeyBucket(key)), requestId);
  }
}

function rateLimited(window: WindowCount, what: string): RateLimitRefusal {
  return rateLimitRefusal(`Too many ${what}.`, window.resetInMs);
}
