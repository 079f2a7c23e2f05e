import crypto from 'node:crypto';
import { maskCardNumbers, type KeyMode } from '@tessera/common';
import { EVENT_TYPES, isEventType, type EventType } from './eventTypes';

/**
 * Webhook endpoints (issue 27, docs/webhooks.md "Webhook endpoints"): where a merchant wants its
 * events of one mode sent, and the secrets deliveries are signed with. Rules only, no I/O.
 */

export const WEBHOOK_ENDPOINT_ID_PATTERN = /^we_[A-Za-z0-9_-]{32}$/;
/** Endpoints per merchant and mode: each one is a delivery stream to keep healthy. */
export const MAX_WEBHOOK_ENDPOINTS = 16;
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** How long a rotated-out secret keeps signing beside the new one: default and ceiling. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;
/** `enabledEvents: ["*"]`: every type, including types added later. */
export const ALL_EVENTS = '*';

/** One signing secret of an endpoint: derived from its generation, so nothing secret is stored. */
export interface WebhookSecretGeneration {
  generation: number;
  /** ISO time after which it no longer signs; null for the current one. */
  expiresAt: string | null;
}

export type WebhookEndpointStatus = 'enabled' | 'disabled';

export interface WebhookEndpointRecord {
  id: string;
  merchantId: string;
  mode: KeyMode;
  url: string;
  enabledEvents: (EventType | typeof ALL_EVENTS)[];
  status: WebhookEndpointStatus;
  /** ISO time. */
  createdAt: string;
  /** Why delivery stopped, when `status` is `disabled` (e.g. `failing_since:<iso>`); never a response body. */
  disabledReason?: string;
  /** Generations whose secrets still sign (derived with `webhookSecret`, never stored). */
  secrets: WebhookSecretGeneration[];
}

export function newWebhookEndpointId(): string {
  return `we_${crypto.randomBytes(24).toString('base64url')}`;
}

/**
 * An endpoint's signing secret, derived from the deployment's API-key pepper like the form signing
 * secret (a label of its own, the merchant, mode, endpoint and generation): nothing to store or
 * encrypt at rest, every replica and a future delivery worker agree on it, and rotating is a new
 * generation number. It changes if the pepper does.
 */
export function webhookSecret(pepper: string, merchantId: string, mode: KeyMode, endpointId: string, generation: number): string {
  const mac = crypto
    .createHmac('sha256', pepper)
    .update(`tessera webhook-endpoint secret v1\0${merchantId}\0${mode}\0${endpointId}\0${generation}`)
    .digest('base64url');
  return `whsec_${mac}`;
}

/** The generations that still sign at `now`, newest first. */
export function signingGenerations(secrets: readonly WebhookSecretGeneration[], now: Date): WebhookSecretGeneration[] {
  return secrets.filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > now.getTime()).sort((a, b) => b.generation - a.generation);
}

/** After a rotation: a new current generation; the old current one expires after the overlap; expired ones are dropped. */
export function rotatedSecrets(secrets: readonly WebhookSecretGeneration[], now: Date, overlapSeconds: number): WebhookSecretGeneration[] {
  const expiresAt = new Date(now.getTime() + overlapSeconds * 1000).toISOString();
  const next = Math.max(0, ...secrets.map((s) => s.generation)) + 1;
  const kept = signingGenerations(secrets, now).map((s) => (s.expiresAt === null ? { ...s, expiresAt } : s));
  return [{ generation: next, expiresAt: null }, ...kept.filter((s) => Date.parse(s.expiresAt as string) > now.getTime())];
}

/** `expiresInSeconds` of a rotation: an integer 0..7 days, default 24 h. */
export function secretOverlapSeconds(value: unknown): number | { error: string } {
  if (value === undefined) return DEFAULT_SECRET_OVERLAP_SECONDS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_SECRET_OVERLAP_SECONDS) {
    return { error: `must be an integer from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (7 days)` };
  }
  return value;
}

/**
 * The endpoint's URL: https for live keys, http also for test keys (a receiver on a laptop). No
 * credentials, no fragment, no text the URL parser would rewrite. Which addresses may be reached
 * (private, loopback, ports) is not decided here but at delivery, by the proxy service's egress
 * policy: a name can resolve elsewhere by then.
 */
export function webhookUrl(value: unknown, mode: KeyMode): { url: string } | { error: string } {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_WEBHOOK_URL_LENGTH) {
    return { error: `must be a URL of 1-${MAX_WEBHOOK_URL_LENGTH} characters` };
  }
  // The parser drops tabs and newlines and turns `\` into `/`: text with them is not what it shows.
  if (/[^\x21-\x7e]|\\/.test(value)) return { error: 'must be plain ASCII without spaces, tabs, newlines or backslashes' };
  if (!URL.canParse(value)) return { error: 'is not a valid URL' };
  const url = new URL(value);
  const allowed = mode === 'live' ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(url.protocol)) return { error: mode === 'live' ? 'must be https:// for a live key' : 'must be an http(s) URL' };
  if (!/^https?:\/\/[^/]/i.test(value)) return { error: 'must be an absolute URL (https://shop.example/tessera-events)' };
  const authority = /^https?:\/\/([^/?#]*)/i.exec(value)?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) {
    return { error: 'must not contain a user name or password' };
  }
  if (value.includes('#')) return { error: 'must not contain a #fragment' };
  return { url: url.toString() };
}

/** `enabledEvents`: 1..n known types without repeats, or `["*"]` alone. */
export function enabledEvents(value: unknown): { events: (EventType | typeof ALL_EVENTS)[] } | { error: string } {
  if (!Array.isArray(value) || value.length === 0) return { error: 'must be a non-empty array of event types, or ["*"]' };
  if (value.includes(ALL_EVENTS)) return value.length === 1 ? { events: [ALL_EVENTS] } : { error: '"*" must stand alone' };
  const unknown = value.find((t) => !isEventType(t));
  // The caller's text is echoed, so masked: a card number typed here never reaches an error.
  if (unknown !== undefined)
    return { error: `${maskCardNumbers(JSON.stringify(unknown))} is not an event type (one of ${EVENT_TYPES.join(', ')})` };
  if (new Set(value).size !== value.length) return { error: 'must not repeat a type' };
  return { events: value as EventType[] };
}

/**
 * A new endpoint from a caller's `url` and `enabledEvents` (the merchant API's and the admin API's
 * create), or the field that is wrong and why. Enabled, with its first secret generation.
 */
export function newWebhookEndpoint(
  input: { merchantId: string; mode: KeyMode; url: unknown; enabledEvents: unknown },
  now: Date,
): { record: WebhookEndpointRecord } | { param: 'url' | 'enabledEvents'; error: string } {
  const url = webhookUrl(input.url, input.mode);
  if ('error' in url) return { param: 'url', error: url.error };
  const events = enabledEvents(input.enabledEvents);
  if ('error' in events) return { param: 'enabledEvents', error: events.error };
  return {
    record: {
      id: newWebhookEndpointId(),
      merchantId: input.merchantId,
      mode: input.mode,
      url: url.url,
      enabledEvents: events.events,
      status: 'enabled',
      createdAt: now.toISOString(),
      secrets: [{ generation: 1, expiresAt: null }],
    },
  };
}

/** The secret deliveries are signed with from now on: the one to show after create and rotate-secret. */
export function currentWebhookSecret(pepper: string, record: WebhookEndpointRecord, now: Date): string {
  const current = signingGenerations(record.secrets, now).find((s) => s.expiresAt === null);
  // The store always keeps a current generation; a record without one is a defect, not input.
  if (!current) throw new Error(`webhook endpoint ${record.id} has no current secret`);
  return webhookSecret(pepper, record.merchantId, record.mode, record.id, current.generation);
}
