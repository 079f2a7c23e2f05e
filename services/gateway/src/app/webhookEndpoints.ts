import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import {
  currentWebhookSecret,
  EVENT_TYPES,
  MAX_SECRET_OVERLAP_SECONDS,
  MAX_WEBHOOK_ENDPOINTS,
  MAX_WEBHOOK_URL_LENGTH,
  newWebhookEndpoint,
  secretOverlapSeconds,
  WEBHOOK_ENDPOINT_ID_PATTERN,
  type ApiKeyRecord,
  type WebhookEndpointRecord,
  type WebhookEndpointStatus,
} from '@tessera/merchant-data';
import { parseInput } from '@tessera/edge';
import type { WebhookEndpoints } from './ports';

/**
 * A merchant's webhook endpoints as its server manages them with a secret key
 * (/v1/webhook-endpoints; docs/webhooks.md, "Webhook endpoints"). Delivery reads the same store
 * elsewhere. Secrets are derived from the API-key pepper (webhookSecret), never stored, and shown
 * only in the answers of create and rotate-secret.
 */
export interface WebhookEndpointDeps {
  endpoints: WebhookEndpoints;
  /** The resolved API_KEY_PEPPER: the root every endpoint's secret is derived from. */
  pepper: string;
  now: () => Date;
}

type Owner = Pick<ApiKeyRecord, 'merchantId' | 'mode'>;

/** Longer than any type's name; a longer string is refused before it could be echoed in a message. */
const MAX_EVENT_TYPE_LENGTH = 64;

export const createWebhookEndpointSchema = z.strictObject({
  url: z.string({ error: '"url" must be a string.' }).meta({
    description: `https:// (test keys: also http://), at most ${MAX_WEBHOOK_URL_LENGTH} characters, no user name, password or #fragment.`,
  }),
  enabledEvents: z
    .array(
      z
        .string({ error: '"enabledEvents" must hold event types.' })
        .max(MAX_EVENT_TYPE_LENGTH, { error: '"enabledEvents" must hold event types.' }),
      { error: '"enabledEvents" must be an array.' },
    )
    .max(EVENT_TYPES.length, { error: `"enabledEvents" must hold at most ${EVENT_TYPES.length} types.` })
    .meta({
      description:
        'Event types of the catalogue (docs/webhooks.md), without repeats; or ["*"] for every type, including types added later.',
    }),
});

export const rotateWebhookSecretSchema = z.strictObject({
  expiresInSeconds: z.unknown().optional().meta({
    type: 'integer',
    minimum: 0,
    maximum: MAX_SECRET_OVERLAP_SECONDS,
    description: 'How long the old secret keeps signing beside the new one: 0 to 604800 (7 days), default 86400 (24 hours).',
  }),
});

export interface WebhookEndpointJson {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  enabledEvents: string[];
  status: WebhookEndpointStatus;
  createdAt: string;
  /** Only in the answers of create and rotate-secret. */
  secret?: string;
}

export interface WebhookEndpointListJson {
  object: 'list';
  data: WebhookEndpointJson[];
  hasMore: false;
}

export function webhookEndpointJson(record: WebhookEndpointRecord): WebhookEndpointJson {
  return {
    id: record.id,
    object: 'webhook_endpoint',
    url: record.url,
    enabledEvents: record.enabledEvents,
    status: record.status,
    createdAt: record.createdAt,
  };
}

/** The endpoint with its current secret: only create and rotate-secret answer this. */
function withCurrentSecret(deps: WebhookEndpointDeps, record: WebhookEndpointRecord): WebhookEndpointJson {
  return { ...webhookEndpointJson(record), secret: currentWebhookSecret(deps.pepper, record, deps.now()) };
}

/** POST /v1/webhook-endpoints: a new endpoint of the key's merchant and mode, with its secret. */
export async function createWebhookEndpoint(
  deps: WebhookEndpointDeps,
  key: Owner,
  raw: Record<string, unknown>,
): Promise<WebhookEndpointJson> {
  const input = parseInput(createWebhookEndpointSchema, raw);
  const created = newWebhookEndpoint({ merchantId: key.merchantId, mode: key.mode, ...input }, deps.now());
  if ('error' in created)
    throw new TesseraError('parameter_invalid', { param: created.param, message: `"${created.param}" ${created.error}.` });
  const { record } = created;
  if ((await deps.endpoints.create(record)) === 'limit_reached') {
    throw new TesseraError('webhook_endpoint_limit_reached', {
      message: `This merchant has ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints in ${key.mode} mode, the most it may; delete one before adding another.`,
    });
  }
  return withCurrentSecret(deps, record);
}

/** GET /v1/webhook-endpoints: every endpoint of the key's mode (at most MAX_WEBHOOK_ENDPOINTS), oldest first. */
export async function listWebhookEndpoints(deps: WebhookEndpointDeps, key: Owner): Promise<WebhookEndpointListJson> {
  const records = await deps.endpoints.list(key.merchantId, key.mode);
  return { object: 'list', data: records.map(webhookEndpointJson), hasMore: false };
}

function checkedId(id: string): string {
  if (!WEBHOOK_ENDPOINT_ID_PATTERN.test(id)) throw new TesseraError('webhook_endpoint_not_found');
  return id;
}

/** Another merchant's or mode's endpoint is answered like an unknown one. */
export async function getWebhookEndpoint(deps: WebhookEndpointDeps, key: Owner, id: string): Promise<WebhookEndpointJson> {
  const record = await deps.endpoints.get(key.merchantId, key.mode, checkedId(id));
  if (record === undefined) throw new TesseraError('webhook_endpoint_not_found');
  return webhookEndpointJson(record);
}

export async function deleteWebhookEndpoint(deps: WebhookEndpointDeps, key: Owner, id: string): Promise<void> {
  if (!(await deps.endpoints.delete(key.merchantId, key.mode, checkedId(id)))) throw new TesseraError('webhook_endpoint_not_found');
}

/** POST /v1/webhook-endpoints/{id}/rotate-secret: a new secret; the old one signs beside it for the overlap. */
export async function rotateWebhookSecret(
  deps: WebhookEndpointDeps,
  key: Owner,
  id: string,
  raw: Record<string, unknown>,
): Promise<WebhookEndpointJson> {
  const input = parseInput(rotateWebhookSecretSchema, raw);
  const overlap = secretOverlapSeconds(input.expiresInSeconds);
  if (typeof overlap !== 'number') {
    throw new TesseraError('parameter_invalid', { param: 'expiresInSeconds', message: `"expiresInSeconds" ${overlap.error}.` });
  }
  const record = await deps.endpoints.rotateSecret(key.merchantId, key.mode, checkedId(id), deps.now(), overlap);
  if (record === undefined) throw new TesseraError('webhook_endpoint_not_found');
  return withCurrentSecret(deps, record);
}
