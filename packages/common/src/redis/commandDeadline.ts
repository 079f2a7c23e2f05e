import { withDeadline } from '../deadline';

/** Connection management, not commands: bounded by connectTimeout / disconnectTimeout instead. */
const UNBOUNDED = new Set<PropertyKey>(['connect', 'quit', 'disconnect']);

/**
 * The client with every command's reply bounded by `timeoutMs` from when the command is issued.
 * ioredis's commandTimeout starts only once a command is written, and with auto-pipelining a
 * command first waits for the replies of the pipeline already in flight: behind a stalled Redis
 * it failed after twice REDIS_COMMAND_TIMEOUT_MS (measured: 503s at 2.0 s for 1000 ms).
 * Explicit MULTI/pipelines are written at once, so their commands are bounded by commandTimeout.
 */
export function withCommandDeadline<C extends object>(client: C, timeoutMs: number): C {
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function' || UNBOUNDED.has(prop)) return value;
      return (...args: unknown[]): unknown => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return isPromise(result) ? withDeadline(result, timeoutMs, () => new Error('Command timed out')) : result;
      };
    },
  });
}

export function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
