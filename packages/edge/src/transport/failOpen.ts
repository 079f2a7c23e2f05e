import { createLogThrottle, withDeadline, type Logger } from '@tessera/common';

/** A limiter's store call, run by failOpen: its answer, or undefined when the store could not answer. */
export type FailOpen = <T>(op: () => Promise<T>, requestId: string) => Promise<T | undefined>;

export interface FailOpenOptions {
  /**
   * RATE_LIMIT_STORE_TIMEOUT_MS: how long a request waits for the store before going through as
   * if under the limit; absent: as long as the store takes (its own command timeout).
   */
  deadlineMs?: number | undefined;
  mayLog?: () => boolean;
}

/**
 * How a limiter asks its store: when the store cannot answer, the request goes through as if
 * under the limit, since an outage of a limiter must not become an outage of payments (and a dead
 * Redis fails the key lookup anyway). `message` says which limits are off; it is logged at most
 * once every 10 s, however many requests meet the outage.
 *
 * The deadline is shorter than the Redis command timeout because a limiter's counter is in the
 * client address's slot, not the key's: with that one Cluster master down, the key lookup answers
 * at once while the counter would hold every request from the address for the full command
 * timeout, only to fail open anyway. Not waiting for the counter once the key has answered would
 * be faster still, but it would let an address over its failed-auth limit through whenever the
 * key's master happens to answer first, a coin toss even in a healthy cluster; a deadline keeps
 * the limit whenever the counter answers in time and costs at most the deadline in an outage.
 */
export function failOpen(logger: Logger, message: string, options: FailOpenOptions = {}): FailOpen {
  const mayLog = options.mayLog ?? createLogThrottle();
  const { deadlineMs } = options;
  return async <T>(op: () => Promise<T>, requestId: string): Promise<T | undefined> => {
    try {
      const answer = op();
      if (deadlineMs === undefined) return await answer;
      return await withDeadline(answer, deadlineMs, () => new Error(`rate limit store did not answer within ${deadlineMs} ms`));
    } catch (err) {
      if (mayLog()) logger.error({ err, requestId }, message);
      return undefined;
    }
  };
}
