import type { Logger } from '@tessera/common';
import { buildEvent, type EventRecord } from './domain/events';
import type { EventType } from './domain/eventTypes';
import type { SweepLease } from './store/sweepLease';

/**
 * How a service that emits events (issue 27) records them: what each service's app layer declares
 * as its EventRecorder port (RedisEventStore implements it), and the rule that a recording failure
 * never fails the action that already happened. That action is done (a session completed, a key
 * revoked): the failure is logged, without the object, and counted, and the caller goes on.
 */
export interface EventRecorderPort {
  record(event: EventRecord): Promise<void>;
  recordOnce(event: EventRecord, once: string, markForMs?: number): Promise<boolean>;
}

export interface EventEmission {
  type: EventType;
  merchantId: string;
  mode: 'test' | 'live';
  object: Record<string, unknown>;
  /** The object and threshold this event is about: recorded once under that name (RedisEventStore.recordOnce). */
  once?: string;
  /** How long the `once` mark must last at least (the window a sweep sees the object in, and a margin). */
  onceForMs?: number;
  now?: Date;
}

/** Where a failure is said: a pino logger, or a CLI's stderr. */
export interface EventFailureLog {
  error(fields: Record<string, unknown>, message: string): void;
}

export interface EmissionObservers {
  logger?: EventFailureLog;
  /** Counts a failure by type (a metric); never given the object. */
  onFailure?: (type: EventType) => void;
}

/** 'recorded', 'already' (recorded before under `once`), or 'failed' (logged and counted, never thrown). */
export async function emitEvent(
  recorder: EventRecorderPort,
  emission: EventEmission,
  observers: EmissionObservers,
): Promise<'recorded' | 'already' | 'failed'> {
  try {
    const event = buildEvent(emission);
    if (emission.once === undefined) {
      await recorder.record(event);
      return 'recorded';
    }
    return (await recorder.recordOnce(event, emission.once, emission.onceForMs)) ? 'recorded' : 'already';
  } catch (err) {
    // The message only: buildEvent's never echoes the object, and a Redis error names no card.
    observers.logger?.error(
      { type: emission.type, merchantId: emission.merchantId, mode: emission.mode, err: err instanceof Error ? err.message : 'unknown' },
      'event not recorded',
    );
    observers.onFailure?.(emission.type);
    return 'failed';
  }
}

export interface SweepSchedule {
  /** Waits for a sweep in progress, then stops the timer. */
  stop(): Promise<void>;
}

/** A background job started by repeatEvery. */
export interface RepeatedJob extends SweepSchedule {
  /** Set once stop() was called: a long run checks it between its steps. */
  readonly stopped: boolean;
}

/**
 * Runs `run` every `intervalMs` and once `firstAfterMs` after start, never two at a time (a tick
 * that finds the previous run still going skips). A run's failure goes to `onError` and the next
 * tick tries again; the timers never keep the process alive.
 */
export function repeatEvery(params: {
  intervalMs: number;
  firstAfterMs: number;
  run: () => Promise<void>;
  onError: (err: unknown) => void;
}): RepeatedJob {
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = (): void => {
    if (running || stopped) return;
    running = params
      .run()
      .catch(params.onError)
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, params.intervalMs);
  timer.unref();
  const first = setTimeout(tick, Math.min(params.firstAfterMs, params.intervalMs));
  first.unref();
  return {
    get stopped() {
      return stopped;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}

/**
 * Runs `sweep` every `intervalMs` when this replica takes the lease named `name`. A sweep's failure
 * is logged (by name) and the next interval tries again; the timer never keeps the process alive.
 */
export function scheduleSweep(params: {
  name: string;
  intervalMs: number;
  lease: SweepLease;
  sweep: () => Promise<void>;
  logger: Pick<Logger, 'error'>;
}): SweepSchedule {
  return repeatEvery({
    intervalMs: params.intervalMs,
    // The first sweep soon after start, not a whole interval later.
    firstAfterMs: 1000,
    run: async () => {
      // A little under the interval, so the next tick of whichever replica comes first finds it lapsed.
      if (!(await params.lease.take(params.name, Math.max(1, params.intervalMs - 250)))) return;
      await params.sweep();
    },
    onError: (err) =>
      params.logger.error({ sweep: params.name, err: err instanceof Error ? err.message : 'unknown' }, 'event sweep failed'),
  });
}
