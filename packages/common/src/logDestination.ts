import pino from 'pino';

type TurnBatchedTarget = Pick<pino.DestinationStream, 'write'>;

export interface TurnBatchedDestination extends pino.DestinationStream {
  /** pino's logger.flush(cb): the write is synchronous, so `cb` runs once it is done. */
  flush(cb?: () => void): void;
  flushSync(): void;
}

/**
 * The lines logged during one turn of the event loop, written together by one synchronous
 * `write(2)` at the end of that turn (setImmediate runs before the loop waits again).
 *
 * Why not pino's asynchronous destination: it hands each write to libuv's thread pool, and the
 * completion wakes the event loop once more, so every line costs the process an extra wake-up,
 * which on a request served alone costs more than the write itself (docs/PERFORMANCE.md, round
 * two). Why not a plain synchronous one: under load many requests finish in one turn, and their
 * lines still go out in one write. `target` does the writing: a synchronous SonicBoom retries a
 * full non-blocking pipe and a partial write, and stops logging on EPIPE.
 */
export function turnBatchedDestination(target: TurnBatchedTarget = pino.destination({ dest: 1, sync: true })): TurnBatchedDestination {
  let pending: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? (pending[0] as string) : pending.join('');
    pending = [];
    target.write(text);
  };
  return {
    write(line: string): void {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush(cb) {
      flush();
      cb?.();
    },
    flushSync: flush,
  };
}

let stdout: TurnBatchedDestination | undefined;

/** One per process, flushed when the process exits (also after an uncaught exception or process.exit()). */
export function stdoutDestination(): TurnBatchedDestination {
  if (stdout === undefined) {
    const destination = turnBatchedDestination();
    process.once('exit', () => destination.flushSync());
    stdout = destination;
  }
  return stdout;
}
