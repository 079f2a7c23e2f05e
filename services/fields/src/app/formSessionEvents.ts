import {
  emitEvent,
  type EventFailureLog,
  formSessionStatus,
  type EventEmission,
  type EventType,
  type FormSessionRecord,
  type FormSessionStore,
} from '@tessera/merchant-data';
import type { EventRecorder } from './ports';

/**
 * The form sessions' events (issue 27). `form_session.completed` is recorded by the request that
 * completes the session, server side, before the shopper is redirected: a browser that never
 * follows the redirect changes nothing. The sweep records `form_session.expired` for sessions that
 * ended unused, and is the completed event's backstop should the process die between completing a
 * session and recording its event. Each is recorded once per session (recordOnce).
 */
/** How the fields service records its events (form sessions, card testing), and says when it cannot. */
export interface FieldsEventDeps {
  recorder: EventRecorder;
  logger?: EventFailureLog;
  /** Counts an event that could not be recorded (a metric, by type). */
  onFailure?: (type: EventType) => void;
}

/** What a merchant learns of a completed session: its token (to retain), brand, last4 and the payment's outcome. */
export function completedEmission(record: FormSessionRecord): EventEmission {
  const result = record.result;
  const payment = record.payment?.status;
  return {
    type: 'form_session.completed',
    merchantId: record.merchantId,
    mode: record.mode,
    object: {
      id: record.id,
      status: 'completed',
      ...(result ? { token: result.token, brand: result.card.brand, last4: result.card.last4 } : {}),
      ...(payment === 'succeeded' || payment === 'declined' || payment === 'unknown' ? { payment } : {}),
    },
    once: `form_session.completed:${record.id}`,
  };
}

export function expiredEmission(record: FormSessionRecord): EventEmission {
  return {
    type: 'form_session.expired',
    merchantId: record.merchantId,
    mode: record.mode,
    object: { id: record.id, status: 'expired' },
    once: `form_session.expired:${record.id}`,
  };
}

/** Records the completed event of a session this request just completed; never throws (emitEvent). */
export async function recordFormSessionCompleted(deps: FieldsEventDeps | undefined, record: FormSessionRecord): Promise<void> {
  if (deps === undefined) return;
  await emitEvent(deps.recorder, completedEmission(record), deps);
}

/** How many sessions one sweep reads from the index at a time. */
const SWEEP_BATCH = 200;

/**
 * One sweep over the sessions whose expiry has passed: an open one (no card in flight) ended
 * unused, `form_session.expired`; a completed one gets its completed event if it has none yet; a
 * canceled one nothing (the shopper chose, the merchant's cancel URL was told). A session with a
 * card still at the merchant's completion endpoint stays for the next sweep, as does one whose
 * event could not be recorded now.
 */
export async function sweepFormSessions(
  deps: FieldsEventDeps & { sessions: Pick<FormSessionStore, 'dueForSweep' | 'forgetSwept'>; now: () => Date },
): Promise<{ expired: number; completed: number }> {
  const counts = { expired: 0, completed: 0 };
  for (;;) {
    const now = deps.now();
    const due = await deps.sessions.dueForSweep(now, SWEEP_BATCH);
    const done: string[] = [];
    for (const record of due) {
      const status = formSessionStatus(record, now);
      if (status === 'canceled') {
        done.push(record.id);
        continue;
      }
      if (record.payment?.status === 'processing') continue;
      const emission = status === 'completed' ? completedEmission(record) : status === 'expired' ? expiredEmission(record) : undefined;
      if (emission === undefined) continue;
      const outcome = await emitEvent(deps.recorder, emission, deps);
      if (outcome === 'failed') continue;
      if (outcome === 'recorded') counts[status === 'completed' ? 'completed' : 'expired'] += 1;
      done.push(record.id);
    }
    await deps.sessions.forgetSwept(done);
    // A short batch was the last; a batch with sessions left for later would be read again at once.
    if (due.length < SWEEP_BATCH || done.length < due.length) return counts;
  }
}
