import type { KeyMode } from '@tessera/common';
import type { DeliveryAttempt, EventStore, WebhookDeliveryStore } from '@tessera/merchant-data';

/**
 * What the webhook use cases (app/webhookEndpoints.ts) need from delivery: the recent attempts to
 * one endpoint, a way to send one event to it again, and to drop its queue when it is deleted. The
 * delivery dispatcher owns the records; the admin service only reads them and queues a resend, so
 * it never sends anything itself (the proxy service is the only one with outbound access).
 * webhookDeliveriesOver (below) implements it over @tessera/merchant-data's delivery and event stores.
 */
export interface WebhookDeliveryAttempt {
  eventId: string;
  eventType: string;
  /** 1 for the first try; a resend starts again at 1. */
  attempt: number;
  /** `succeeded` (2xx), `failed` (another attempt is scheduled) or `gave_up` (the retry window is over). */
  outcome: string;
  /** The receiver's HTTP status; null when none came back. */
  responseStatus: number | null;
  latencyMs: number | null;
  /** Why an attempt without a status failed (`timeout`, `unreachable`, `forbidden`); never a response body. */
  error: string | null;
  /** ISO time of the attempt. */
  at: string;
  /** ISO time of the next attempt after a `failed` one; null otherwise. */
  nextAttemptAt: string | null;
}

/** What waits in the endpoint's queue: events not delivered yet (retries and resends included). */
export interface WebhookQueueView {
  depth: number;
  /** ISO creation time of the oldest waiting event; null when none waits. */
  oldestCreatedAt: string | null;
}

export interface WebhookDeliveriesPort {
  /** Newest first, at most `limit`. */
  recentDeliveries(merchantId: string, mode: KeyMode, endpointId: string, limit: number): Promise<WebhookDeliveryAttempt[]>;
  /** Queues the event for the endpoint again, due now; `event_not_found` when the event is unknown, of another mode, or past its retention. */
  resend(merchantId: string, mode: KeyMode, endpointId: string, eventId: string): Promise<'queued' | 'event_not_found'>;
  queued(merchantId: string, endpointId: string): Promise<WebhookQueueView>;
  /** Drops a deleted endpoint's queue, delivery states and log. */
  forgetEndpoint(merchantId: string, endpointId: string): Promise<void>;
}

/** An attempt as the delivery store logs it, in the port's shape (absent fields as null). */
export function deliveryAttemptView(attempt: DeliveryAttempt): WebhookDeliveryAttempt {
  return {
    eventId: attempt.eventId,
    eventType: attempt.type,
    attempt: attempt.attempt,
    outcome: attempt.outcome,
    responseStatus: attempt.status ?? null,
    latencyMs: attempt.latencyMs,
    error: attempt.error ?? null,
    at: attempt.at,
    nextAttemptAt: attempt.nextAttemptAt ?? null,
  };
}

/**
 * The port over the dispatcher's store (its attempt log, its queues) and the event store: a resend
 * queues the event as it was recorded, so the receiver gets the same id and body.
 */
export function webhookDeliveriesOver(
  deliveries: Pick<WebhookDeliveryStore, 'log' | 'requeue' | 'forgetEndpoint' | 'queueStats'>,
  events: Pick<EventStore, 'get'>,
  now: () => Date = () => new Date(),
): WebhookDeliveriesPort {
  return {
    // The endpoint id names one mode already: the use case found it under `mode` before asking.
    recentDeliveries: async (merchantId, _mode, endpointId, limit) =>
      (await deliveries.log(merchantId, endpointId, limit)).map(deliveryAttemptView),
    resend: async (merchantId, mode, endpointId, eventId) => {
      const event = await events.get(merchantId, mode, eventId);
      if (event === undefined) return 'event_not_found';
      await deliveries.requeue(merchantId, endpointId, event, now());
      return 'queued';
    },
    queued: async (merchantId, endpointId) => {
      const { depth, oldestCreatedMs } = await deliveries.queueStats(merchantId, endpointId);
      return { depth, oldestCreatedAt: oldestCreatedMs === undefined ? null : new Date(oldestCreatedMs).toISOString() };
    },
    forgetEndpoint: (merchantId, endpointId) => deliveries.forgetEndpoint(merchantId, endpointId),
  };
}
