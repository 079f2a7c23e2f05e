import { z } from 'zod';
import { TesseraError, type Logger } from '@tessera/common';
import { buildEvent, EVENT_ID_PATTERN, EVENT_TYPES, type ApiKeyRecord, type EventRecord, type EventType } from '@tessera/merchant-data';
import { parseInput } from '@tessera/edge';
import type { EventReader, EventRecorder } from './ports';

/**
 * The merchant's events (GET /v1/events, GET /v1/events/{id}; docs/webhooks.md, "Events") and the
 * way the gateway's use cases record them. Transport only parses and answers.
 */

export interface EventDeps {
  events: EventReader;
}

type Owner = Pick<ApiKeyRecord, 'merchantId' | 'mode'>;

const LIMIT_ERROR = '"limit" must be an integer from 1 to 100.';

export const listEventsSchema = z.strictObject({
  type: z.enum(EVENT_TYPES, { error: `"type" must be an event type (${EVENT_TYPES.join(', ')}).` }).optional(),
  limit: z.coerce
    .number({ error: LIMIT_ERROR })
    .int({ error: LIMIT_ERROR })
    .min(1, { error: LIMIT_ERROR })
    .max(100, { error: LIMIT_ERROR })
    .default(10),
  startingAfter: z
    .string({ error: '"startingAfter" must be an event id.' })
    .regex(EVENT_ID_PATTERN, { error: '"startingAfter" must be an event id (evt_…).' })
    .optional(),
});

/** An event as its merchant sees it: the merchant id is implied by the key, so it is left out. */
export interface EventJson {
  id: string;
  object: 'event';
  type: EventType;
  created: number;
  mode: 'test' | 'live';
  data: { object: Record<string, unknown> };
}

export interface EventListJson {
  object: 'list';
  data: EventJson[];
  hasMore: boolean;
}

export function eventJson(event: EventRecord): EventJson {
  return { id: event.id, object: 'event', type: event.type, created: event.created, mode: event.mode, data: event.data };
}

/** GET /v1/events: the key's merchant's events of the key's mode, newest first. */
export async function listEvents(deps: EventDeps, key: Owner, raw: Record<string, unknown>): Promise<EventListJson> {
  const input = parseInput(listEventsSchema, raw);
  const { data, hasMore } = await deps.events.list(key.merchantId, key.mode, {
    limit: input.limit,
    ...(input.type ? { type: input.type } : {}),
    ...(input.startingAfter ? { startingAfter: input.startingAfter } : {}),
  });
  return { object: 'list', data: data.map(eventJson), hasMore };
}

/** Another merchant's or mode's event is answered like an unknown one (existence is not revealed). */
export async function getEvent(deps: EventDeps, key: Owner, id: string): Promise<EventJson> {
  const event = EVENT_ID_PATTERN.test(id) ? await deps.events.get(key.merchantId, key.mode, id) : undefined;
  if (event === undefined || event.merchantId !== key.merchantId || event.mode !== key.mode) throw new TesseraError('event_not_found');
  return eventJson(event);
}

/**
 * How a use case records an event: after the change it reports has happened, before the answer.
 * Never rejects: the merchant's request already succeeded (at the vault), so a lost record is
 * logged and counted (tessera_events_record_failures_total), not turned into an error the merchant
 * would retry. The log line names the type and merchant, never the object (or any card data).
 */
export interface EventSink {
  recorder: EventRecorder;
  logger: Logger;
  /** Counts a record that was not kept. */
  countFailure: (type: EventType) => void;
  now: () => Date;
}

export type RecordEvent = (type: EventType, owner: Owner, object: Record<string, unknown>, ctx: { requestId: string }) => Promise<void>;

export function eventRecording(sink: EventSink): RecordEvent {
  return async (type, owner, object, ctx) => {
    try {
      await sink.recorder.record(buildEvent({ type, merchantId: owner.merchantId, mode: owner.mode, object, now: sink.now() }));
    } catch (error) {
      sink.countFailure(type);
      sink.logger.error(
        {
          requestId: ctx.requestId,
          eventType: type,
          merchantId: owner.merchantId,
          reason: error instanceof Error ? error.message : 'unknown',
        },
        'event not recorded',
      );
    }
  };
}

/** Records nothing: a gateway wired without an event store, and tests of other things. */
export const recordNoEvent: RecordEvent = async () => undefined;
