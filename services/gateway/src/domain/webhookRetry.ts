import { signWebhookPayload } from '@tessera/sdk';
import type { EventRecord, QueuedDelivery, WebhookEndpointRecord } from '@tessera/merchant-data';

/**
 * The rules of webhook delivery (docs/webhooks.md, "Delivery, retries and ordering"), without I/O:
 * when to try again, when to give up, what may be sent now without breaking the order per object,
 * what is sent and how it is signed.
 */

export interface RetryPolicy {
  /** First backoff ceiling; doubles per attempt. */
  baseMs: number;
  /** Largest backoff ceiling. */
  maxMs: number;
  /** After this long since it was queued, a delivery is given up (3 days by default). */
  windowMs: number;
}

/**
 * "Full jitter" exponential backoff: a uniform draw below min(max, base * 2^(attempt-1)), so that
 * receivers coming back after an outage are not hit by every retry at the same instant.
 * `random` is in [0, 1).
 */
export function backoffDelayMs(attempt: number, policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>, random: number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.floor(random * ceiling);
}

/**
 * When the next attempt of a delivery may start after `attempts` failed ones, or undefined when its
 * retry window is over (it is given up). The last attempt is never scheduled past the window's end.
 */
export function nextAttemptAt(
  queuedAtMs: number,
  attempts: number,
  nowMs: number,
  policy: RetryPolicy,
  random: number,
): number | undefined {
  const end = queuedAtMs + policy.windowMs;
  if (nowMs >= end) return undefined;
  return Math.min(nowMs + backoffDelayMs(attempts, policy, random), end);
}

/** An endpoint with only failures for `disableAfterMs` is disabled. */
export function shouldDisable(failingSinceMs: number, nowMs: number, disableAfterMs: number): boolean {
  return nowMs - failingSinceMs >= disableAfterMs;
}

/** 2xx: delivered. Anything else (3xx included: redirects are not followed) is a failed attempt. */
export function isDelivered(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * The deliveries of a queue head (in order of creation) that may start now, in that order: at most
 * one per object in flight, and none of an object while an earlier event of it is still queued
 * (in backoff, or in flight), so a receiver sees each object's events in order.
 */
export function startableDeliveries(
  head: readonly QueuedDelivery[],
  inFlightObjects: ReadonlySet<string>,
  nowMs: number,
): QueuedDelivery[] {
  const blocked = new Set(inFlightObjects);
  const startable: QueuedDelivery[] = [];
  for (const delivery of head) {
    if (blocked.has(delivery.objectKey)) continue;
    blocked.add(delivery.objectKey);
    if (delivery.nextAttemptAt <= nowMs) startable.push(delivery);
  }
  return startable;
}

/** Whether an endpoint wants an event: same mode, enabled, the type subscribed, and created after the endpoint. */
export function endpointWants(endpoint: WebhookEndpointRecord, event: EventRecord, entryMs: number): boolean {
  if (endpoint.status !== 'enabled' || endpoint.mode !== event.mode) return false;
  if (!endpoint.enabledEvents.some((t) => t === '*' || t === event.type)) return false;
  // Its own disabling goes to the merchant's other endpoints only.
  if (event.type === 'webhook_endpoint.disabled' && event.data.object.id === endpoint.id) return false;
  return entryMs >= Date.parse(endpoint.createdAt);
}

/** The body of a delivery, exactly these fields in this order (never the merchant id). */
export function webhookBody(event: EventRecord): string {
  return JSON.stringify({ id: event.id, type: event.type, created: event.created, mode: event.mode, data: { object: event.data.object } });
}

/** `Tessera-Signature: t=<unix>,v1=<hmac>[,v1=…]`, one v1 per secret that still signs (the SDK's signer). */
export function signatureHeader(secrets: readonly string[], body: string, now: Date): string {
  return signWebhookPayload(secrets, body, Math.floor(now.getTime() / 1000));
}
