import {
  emitEvent,
  type EventFailureLog,
  keyKindOf,
  type ApiKeyRecord,
  type ApiKeyStore,
  type EventRecord,
  type EventType,
} from '@tessera/merchant-data';

/**
 * Where the admin service records the events it emits (api_key.created, .revoked,
 * .expiring_soon): @tessera/merchant-data's RedisEventStore. `recordOnce` keeps the sweep's event
 * to one per key and expiry however often the sweep sees the key.
 */
export interface EventRecorder {
  record(event: EventRecord): Promise<void>;
  recordOnce(event: EventRecord, once: string, markForMs?: number): Promise<boolean>;
}

export interface AdminEventDeps {
  recorder: EventRecorder;
  logger?: EventFailureLog;
  /** Counts an event that could not be recorded (a metric, by type). */
  onFailure?: (type: EventType) => void;
}

/** A key as its events show it: the id, its kind and mode; never the key, its digest or prefix. */
function keyObject(record: ApiKeyRecord): Record<string, unknown> {
  return { id: record.id, kind: keyKindOf(record), mode: record.mode };
}

/**
 * Records api_key.created or .revoked for a change that already happened: a failure is logged and
 * counted (emitEvent), never thrown, so the operator's action is not reported as failed.
 */
export async function recordApiKeyEvent(
  deps: AdminEventDeps | undefined,
  type: 'api_key.created' | 'api_key.revoked',
  record: ApiKeyRecord,
  now: Date,
): Promise<void> {
  if (deps === undefined) return;
  await emitEvent(deps.recorder, { type, merchantId: record.merchantId, mode: record.mode, object: keyObject(record), now }, deps);
}

/**
 * api_key.expiring_soon for each live key whose scheduled expiry (an overlapping rotation,
 * `keys revoke --after`) falls within `days`: once per key and expiry, so a sweep that runs again
 * tells nothing new, and an expiry brought forward is told again.
 */
export async function sweepExpiringApiKeys(
  deps: AdminEventDeps & { keyStore: Pick<ApiKeyStore, 'list'>; days: number; now: () => Date },
): Promise<{ recorded: number }> {
  const now = deps.now();
  const horizon = now.getTime() + deps.days * 86_400_000;
  let recorded = 0;
  for (const record of await deps.keyStore.list()) {
    if (record.revokedAt !== undefined || record.expiresAt === undefined) continue;
    const expiresAtMs = Date.parse(record.expiresAt);
    if (!(expiresAtMs > now.getTime() && expiresAtMs <= horizon)) continue;
    const outcome = await emitEvent(
      deps.recorder,
      {
        type: 'api_key.expiring_soon',
        merchantId: record.merchantId,
        mode: record.mode,
        object: keyObject(record),
        once: `api_key.expiring_soon:${record.id}:${expiresAtMs}`,
        // The key stays in the window for `days`: its mark must outlast that, whatever the event retention.
        onceForMs: (deps.days + 2) * 86_400_000,
        now,
      },
      deps,
    );
    if (outcome === 'recorded') recorded += 1;
  }
  return { recorded };
}
