import type { KeyMode } from '@tessera/common';

/**
 * What the webhook use cases (app/webhookEndpoints.ts) need from delivery: the recent attempts to
 * one endpoint, and a way to send one event to it again. The delivery worker owns the records;
 * the admin service only reads them and asks for a resend, so it never sends anything itself (the
 * proxy service is the only one with outbound access).
 */
export interface WebhookDeliveryAttempt {
  eventId: string;
  eventType: string;
  /** 1 for the first try; a resend starts a new series. */
  attempt: number;
  /** `delivered` (2xx), `failed` (another status, a timeout, a refused destination), or `pending` (not tried yet). */
  outcome: string;
  /** The receiver's HTTP status; null when none came back. */
  responseStatus: number | null;
  latencyMs: number | null;
  /** Why an attempt without a status failed (`timeout`, `unreachable`, `destination_forbidden`); never a response body. */
  error: string | null;
  /** ISO time of the attempt. */
  at: string;
}

export interface WebhookDeliveriesPort {
  /** Newest first, at most `limit`. */
  recentDeliveries(merchantId: string, mode: KeyMode, endpointId: string, limit: number): Promise<WebhookDeliveryAttempt[]>;
  /** Queues the event for the endpoint again; `event_not_found` when the event is unknown or past its retention. */
  resend(merchantId: string, mode: KeyMode, endpointId: string, eventId: string): Promise<'queued' | 'event_not_found'>;
}
