import { z } from 'zod';
import { TesseraError, type KeyMode } from '@tessera/common';
import {
  type AuditLog,
  DEFAULT_SECRET_OVERLAP_SECONDS,
  currentWebhookSecret,
  EVENT_ID_PATTERN,
  MAX_SECRET_OVERLAP_SECONDS,
  newWebhookEndpoint,
  secretOverlapSeconds,
  signingGenerations,
  WEBHOOK_DELIVERY_LOG_LENGTH,
  WEBHOOK_ENDPOINT_ID_PATTERN,
  type WebhookEndpointRecord,
  type WebhookEndpointStore,
} from '@tessera/merchant-data';
import { parseInput } from '@tessera/edge';
import { auditAs, type Caller } from './caller';
import { merchantInReach } from './merchants';
import type { WebhookDeliveriesPort, WebhookDeliveryAttempt, WebhookQueueView } from './webhookDeliveriesPort';

/**
 * A merchant's webhook endpoints as operators manage them (issue 27, "operators can see and
 * replay"): one function per thing the dashboard and the webhooks CLI do. Each checks the caller's
 * reach, writes the audit entry for a change, and never returns or audits a secret except the one
 * answer that shows it (create, rotate).
 */
export interface WebhookEndpointDeps {
  endpoints: WebhookEndpointStore;
  audit: Pick<AuditLog, 'append'>;
  /** The API-key pepper (the newest): secrets are derived from it, as the delivery worker derives them. */
  pepper: string;
  now: () => Date;
  /** Absent: the delivery routes answer 404 (no delivery store wired). */
  deliveries?: WebhookDeliveriesPort;
}

/** An endpoint as operators see it: never a secret, only when the rotated-out one stops signing. */
export interface WebhookEndpointView {
  id: string;
  object: 'webhook_endpoint';
  merchantId: string;
  mode: KeyMode;
  url: string;
  enabledEvents: string[];
  status: 'enabled' | 'disabled';
  /** Why delivery stopped (`failing_since:<iso>`); null while enabled. */
  disabledReason: string | null;
  createdAt: string;
  /** While a rotation overlaps: when the previous secret stops signing; null otherwise. */
  previousSecretExpiresAt: string | null;
}

export function webhookEndpointView(record: WebhookEndpointRecord, now: Date): WebhookEndpointView {
  const previous = signingGenerations(record.secrets, now).find((s) => s.expiresAt !== null);
  return {
    id: record.id,
    object: 'webhook_endpoint',
    merchantId: record.merchantId,
    mode: record.mode,
    url: record.url,
    enabledEvents: [...record.enabledEvents],
    status: record.status,
    disabledReason: record.status === 'disabled' ? (record.disabledReason ?? null) : null,
    createdAt: record.createdAt,
    previousSecretExpiresAt: previous?.expiresAt ?? null,
  };
}

const modeSchema = z.enum(['test', 'live'], { error: '"mode" must be "test" or "live".' });

/** `?mode=` of every webhook route: endpoints belong to one mode, as the keys that manage them on /v1. */
export const webhookModeQuerySchema = z.strictObject({ mode: modeSchema });

/** `/merchants/{merchantId}/webhook-endpoints/{endpointId}` */
export const webhookEndpointPathSchema = z.object({
  merchantId: z.string(),
  endpointId: z.string().regex(WEBHOOK_ENDPOINT_ID_PATTERN, { error: 'A webhook endpoint id is we_ and 32 letters, digits, "_" or "-".' }),
});

export const webhookDeliveryPathSchema = webhookEndpointPathSchema.extend({
  eventId: z.string().regex(EVENT_ID_PATTERN, { error: 'An event id is evt_ and 16 letters, digits, "_" or "-".' }),
});

export const DEFAULT_DELIVERY_LIMIT = 50;
/** The delivery log keeps this many attempts per endpoint. */
export const MAX_DELIVERY_LIMIT = WEBHOOK_DELIVERY_LOG_LENGTH;
const LIMIT_ERROR = `"limit" must be a whole number from 1 to ${MAX_DELIVERY_LIMIT}.`;

export const webhookDeliveriesQuerySchema = webhookModeQuerySchema.extend({
  limit: z.coerce
    .number({ error: LIMIT_ERROR })
    .int({ error: LIMIT_ERROR })
    .min(1, { error: LIMIT_ERROR })
    .max(MAX_DELIVERY_LIMIT, { error: LIMIT_ERROR })
    .default(DEFAULT_DELIVERY_LIMIT)
    .meta({ description: 'How many attempts, newest first (default 50).' }),
});

export const webhookEndpointCreateSchema = z.strictObject({
  url: z.string({ error: '"url" must be a string.' }).meta({
    description: 'Where deliveries are POSTed: https:// (test endpoints may also use http://), no credentials or #fragment.',
  }),
  enabledEvents: z
    .array(z.string({ error: '"enabledEvents" must list event types.' }), { error: '"enabledEvents" must be an array of event types.' })
    .meta({ description: 'Event types (docs/webhooks.md), or ["*"] for every type including later ones.' }),
});

const OVERLAP_ERROR = `"expiresInSeconds" must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (7 days).`;

export const webhookSecretRotateSchema = z.strictObject({
  expiresInSeconds: z
    .int({ error: OVERLAP_ERROR })
    .min(0, { error: OVERLAP_ERROR })
    .max(MAX_SECRET_OVERLAP_SECONDS, { error: OVERLAP_ERROR })
    .optional()
    .meta({ description: `How long the old secret keeps signing beside the new one (default ${DEFAULT_SECRET_OVERLAP_SECONDS}).` }),
});

export interface CreateWebhookEndpointInput {
  url: string;
  enabledEvents: string[];
}

/** The URL and events as the domain rules take them for this mode, or a 400 naming the field. */
export function parseWebhookEndpointInput(raw: Record<string, unknown>, mode: KeyMode): CreateWebhookEndpointInput {
  const parsed = parseInput(webhookEndpointCreateSchema, raw);
  const checked = newWebhookEndpoint({ merchantId: '', mode, ...parsed }, new Date());
  if ('error' in checked)
    throw new TesseraError('parameter_invalid', { param: checked.param, message: `"${checked.param}" ${checked.error}.` });
  return { url: checked.record.url, enabledEvents: checked.record.enabledEvents };
}

/** `expiresInSeconds` of a rotation (the domain's default when absent), or a 400. */
export function parseSecretOverlap(raw: Record<string, unknown>): number {
  const { expiresInSeconds } = parseInput(webhookSecretRotateSchema, raw);
  const overlap = secretOverlapSeconds(expiresInSeconds);
  if (typeof overlap !== 'number') throw new TesseraError('parameter_invalid', { param: 'expiresInSeconds', message: OVERLAP_ERROR });
  return overlap;
}

/** The URL as the audit log keeps it: a query can carry the receiver's own token, so it is cut. */
function auditedUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}${parsed.search === '' ? '' : '?…'}`;
}

function reach(caller: Caller, merchantId: string): string {
  return merchantInReach(caller, merchantId) as string;
}

async function endpointOf(deps: WebhookEndpointDeps, merchantId: string, mode: KeyMode, id: string): Promise<WebhookEndpointRecord> {
  const record = WEBHOOK_ENDPOINT_ID_PATTERN.test(id) ? await deps.endpoints.get(merchantId, mode, id) : undefined;
  if (!record) throw new TesseraError('webhook_endpoint_not_found');
  return record;
}

/** Oldest first, as deliveries fan out. */
export async function listWebhookEndpoints(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
): Promise<WebhookEndpointView[]> {
  reach(caller, merchantId);
  const now = deps.now();
  return (await deps.endpoints.list(merchantId, mode)).map((r) => webhookEndpointView(r, now));
}

export async function getWebhookEndpoint(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
  id: string,
): Promise<WebhookEndpointView> {
  reach(caller, merchantId);
  return webhookEndpointView(await endpointOf(deps, merchantId, mode, id), deps.now());
}

/** Creates an enabled endpoint; its signing secret is in this answer only. */
export async function createWebhookEndpoint(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
  input: CreateWebhookEndpointInput,
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  reach(caller, merchantId);
  const now = deps.now();
  const created = newWebhookEndpoint({ merchantId, mode, ...parseInput(webhookEndpointCreateSchema, { ...input }) }, now);
  if ('error' in created)
    throw new TesseraError('parameter_invalid', { param: created.param, message: `"${created.param}" ${created.error}.` });
  const { record } = created;
  if ((await deps.endpoints.create(record)) === 'limit_reached') throw new TesseraError('webhook_endpoint_limit_reached');
  await auditAs(deps, caller, {
    action: 'webhook_endpoint.created',
    merchantId,
    details: { mode, endpointId: record.id, url: auditedUrl(record.url), enabledEvents: [...record.enabledEvents] },
  });
  return { endpoint: webhookEndpointView(record, now), secret: currentWebhookSecret(deps.pepper, record, now) };
}

/** Deletes it, with its queue and delivery log: nothing more is sent to it, from the next delivery on. */
export async function deleteWebhookEndpoint(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
  id: string,
): Promise<void> {
  reach(caller, merchantId);
  const before = await endpointOf(deps, merchantId, mode, id);
  if (!(await deps.endpoints.delete(merchantId, mode, before.id))) throw new TesseraError('webhook_endpoint_not_found');
  await deps.deliveries?.forgetEndpoint(merchantId, before.id);
  await auditAs(deps, caller, {
    action: 'webhook_endpoint.deleted',
    merchantId,
    details: { mode, endpointId: before.id, url: auditedUrl(before.url) },
  });
}

/** A new secret, in this answer only; the previous one keeps signing for `overlapSeconds`. */
export async function rotateWebhookSecret(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
  id: string,
  overlapSeconds: number,
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  reach(caller, merchantId);
  const overlap = parseSecretOverlap({ expiresInSeconds: overlapSeconds });
  await endpointOf(deps, merchantId, mode, id);
  const now = deps.now();
  const record = await deps.endpoints.rotateSecret(merchantId, mode, id, now, overlap);
  if (!record) throw new TesseraError('webhook_endpoint_not_found');
  const endpoint = webhookEndpointView(record, now);
  await auditAs(deps, caller, {
    action: 'webhook_endpoint.secret_rotated',
    merchantId,
    details: { mode, endpointId: id, previousSecretExpiresAt: endpoint.previousSecretExpiresAt },
  });
  return { endpoint, secret: currentWebhookSecret(deps.pepper, record, now) };
}

/**
 * Turns a disabled endpoint (repeated failures) back on; deliveries resume from the next event.
 * Enabling an enabled one changes nothing and is not audited (`alreadyEnabled`).
 */
export async function enableWebhookEndpoint(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
  id: string,
): Promise<{ endpoint: WebhookEndpointView; alreadyEnabled: boolean }> {
  reach(caller, merchantId);
  const before = await endpointOf(deps, merchantId, mode, id);
  if (before.status === 'enabled') return { endpoint: webhookEndpointView(before, deps.now()), alreadyEnabled: true };
  const record = await deps.endpoints.setStatus(merchantId, mode, id, 'enabled');
  if (!record) throw new TesseraError('webhook_endpoint_not_found');
  await auditAs(deps, caller, {
    action: 'webhook_endpoint.enabled',
    merchantId,
    details: { mode, endpointId: id, disabledReason: before.disabledReason ?? null },
  });
  return { endpoint: webhookEndpointView(record, deps.now()), alreadyEnabled: false };
}

function deliveriesOf(deps: WebhookEndpointDeps): WebhookDeliveriesPort {
  if (deps.deliveries === undefined) throw new TesseraError('route_not_found');
  return deps.deliveries;
}

/** The latest delivery attempts to one endpoint, newest first, and what still waits in its queue. */
export async function listWebhookDeliveries(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
  id: string,
  limit: number = DEFAULT_DELIVERY_LIMIT,
): Promise<{ endpointId: string; deliveries: WebhookDeliveryAttempt[]; queued: WebhookQueueView }> {
  reach(caller, merchantId);
  const deliveries = deliveriesOf(deps);
  const endpoint = await endpointOf(deps, merchantId, mode, id);
  const bounded = Math.min(Math.max(1, Math.trunc(limit)), MAX_DELIVERY_LIMIT);
  const [attempts, queued] = await Promise.all([
    deliveries.recentDeliveries(merchantId, mode, endpoint.id, bounded),
    deliveries.queued(merchantId, endpoint.id),
  ]);
  return { endpointId: endpoint.id, deliveries: attempts, queued };
}

/**
 * Queues one event of the endpoint's merchant and mode for it again, due now, whatever became of
 * earlier attempts (the receiver gets the same event id: it may de-duplicate). Audited.
 */
export async function resendWebhookEvent(
  deps: WebhookEndpointDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
  id: string,
  eventId: string,
): Promise<{ endpointId: string; eventId: string; status: 'queued' }> {
  reach(caller, merchantId);
  const deliveries = deliveriesOf(deps);
  const endpoint = await endpointOf(deps, merchantId, mode, id);
  if (!EVENT_ID_PATTERN.test(eventId)) {
    throw new TesseraError('parameter_invalid', { param: 'eventId', message: 'An event id is evt_ and 16 letters, digits, "_" or "-".' });
  }
  if ((await deliveries.resend(merchantId, mode, endpoint.id, eventId)) === 'event_not_found') {
    throw new TesseraError('event_not_found');
  }
  await auditAs(deps, caller, { action: 'webhook_delivery.resent', merchantId, details: { mode, endpointId: endpoint.id, eventId } });
  return { endpointId: endpoint.id, eventId, status: 'queued' };
}
