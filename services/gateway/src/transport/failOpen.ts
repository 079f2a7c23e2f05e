import { createLogThrottle, type Logger } from '@tessera/common';

/** A limiter's store call, run by failOpen: its answer, or undefined when the store could not answer. */
export type FailOpen = <T>(op: () => Promise<T>, requestId: string) => Promise<T | undefined>;

/**
 * How a limiter asks its store: when the store cannot answer, the request goes through as if
 * under the limit, since an outage of a limiter must not become an outage of payments (and a dead
 * Redis fails the key lookup anyway). `message` says which limits are off; it is logged at most
 * once every 10 s, however many requests meet the outage.
 */
export function failOpen(logger: Logger, message: string, mayLog: () => boolean = createLogThrottle()): FailOpen {
  return async <T>(op: () => Promise<T>, requestId: string): Promise<T | undefined> => {
    try {
      return await op();
    } catch (err) {
      if (mayLog()) logger.error({ err, requestId }, message);
      return undefined;
    }
  };
}
