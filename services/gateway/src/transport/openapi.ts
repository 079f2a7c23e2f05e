import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode } from '@tessera/common';
import { errorEnvelopeSchema } from '@tessera/edge';
import {
  cvcInputSchema,
  cvcSessionCreateSchema,
  PROXY_METHODS,
  proxyRequestSchema,
  retainRequestSchema,
  tokenCreateSchema,
  tokenUpdateSchema,
} from '../domain/requestSchemas';
import { cvcSessionSchema, dryRunSchema, tokenRecordSchema } from './responseJson';
import { createFormSessionSchema, type FormSessionJson, type FormSessionListJson } from '../app/formSessions';
import { EVENT_TYPES, PAGE_LOCALES } from '@tessera/merchant-data';
import {
  createWebhookEndpointSchema,
  rotateWebhookSecretSchema,
  type WebhookEndpointJson,
  type WebhookEndpointListJson,
} from '../app/webhookEndpoints';
import type { EventJson, EventListJson } from '../app/events';

/**
 * The OpenAPI 3.1 document of the public API (the admin service documents its own), generated from the same zod schemas that validate
 * requests (zod 4's own JSON Schema output, draft 2020-12, which is OpenAPI 3.1's dialect), so
 * the document cannot drift from the validation. Response shapes are zod schemas too: the routes'
 * types are inferred from them (responseJson.ts) or checked against them with `satisfies`.
 *
 * A test enumerates the Express router and fails when a route is missing here.
 */

const errorCodes = Object.keys(ERROR_CATALOGUE) as [ErrorCode, ...ErrorCode[]];

const formSessionSchema = z.object({
  id: z.string().meta({ description: '`fs_` followed by 32 URL-safe characters.' }),
  object: z.literal('form_session'),
  status: z.enum(['open', 'completed', 'expired', 'canceled']),
  url: z.string().meta({ description: 'The hosted payment page on the fields origin: send the shopper’s browser here.' }),
  returnUrl: z.string(),
  cancelUrl: z.string().nullable(),
  createdAt: z.string().meta({ format: 'date-time' }),
  expiresAt: z.string().meta({ format: 'date-time', description: 'FORM_SESSION_TTL_SECONDS (30 min) after creation.' }),
  completedAt: z.string().nullable().meta({ format: 'date-time' }),
  token: z.string().nullable().meta({
    description:
      'Once completed: a provisional token (retain it with POST /v1/token/{token}/retain, or it expires after BROWSER_TOKEN_TTL_SECONDS).',
  }),
  card: z.object({ brand: z.string(), last4: z.string(), expiryMonth: z.int(), expiryYear: z.int() }).nullable(),
  amount: z.int().nullable().meta({ description: 'In the currency’s minor unit, as created; null: no amount.' }),
  currency: z.string().nullable(),
  completionUrl: z.string().nullable(),
  merchantName: z.string().nullable(),
  logoUrl: z.string().nullable(),
  submitLabel: z.string().nullable(),
  locale: z.enum(PAGE_LOCALES),
  payment: z
    .object({
      status: z.enum(['processing', 'succeeded', 'declined', 'unknown']),
      attempts: z.int(),
      declineMessage: z.string().nullable(),
    })
    .nullable()
    .meta({
      description:
        'Only with a completionUrl, once a card was sent to it. processing: Tessera awaits the completion endpoint; declined: the ' +
        'last card was declined, the session stays open for another; succeeded: charged (status completed); unknown: the ' +
        'completion endpoint did not answer a known outcome (timeout, non-200, malformed): the session is completed without a ' +
        'further attempt and the merchant settles it from its own records (Idempotency-Key formSession:attempt).',
    }),
}) satisfies z.ZodType<FormSessionJson>;

const formSessionListSchema = z.object({
  object: z.literal('list'),
  data: z.array(formSessionSchema),
  hasMore: z.boolean().meta({ description: 'More sessions follow: ask again with startingAfter set to the last id.' }),
}) satisfies z.ZodType<FormSessionListJson>;

const webhookEndpointSchema = z.object({
  id: z.string().meta({ description: '`we_` followed by 32 URL-safe characters.' }),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  enabledEvents: z.array(z.string()).meta({ description: 'Event types, or ["*"] for every type.' }),
  status: z.enum(['enabled', 'disabled']).meta({ description: 'disabled: deliveries kept failing, so they stopped.' }),
  createdAt: z.string().meta({ format: 'date-time' }),
  secret: z
    .string()
    .optional()
    .meta({ description: '`whsec_…`: only in the answers of create and rotate-secret; it is never shown again.' }),
}) satisfies z.ZodType<WebhookEndpointJson>;

const webhookEndpointListSchema = z.object({
  object: z.literal('list'),
  data: z.array(webhookEndpointSchema),
  hasMore: z.literal(false).meta({ description: 'Always false: every endpoint of the mode (at most 16) is in one page.' }),
}) satisfies z.ZodType<WebhookEndpointListJson>;

const eventSchema = z.object({
  id: z.string().meta({ description: '`evt_` followed by 16 URL-safe characters; the same on every delivery of the event.' }),
  object: z.literal('event'),
  type: z.enum(EVENT_TYPES),
  created: z.int().meta({ description: 'Unix seconds.' }),
  mode: z.enum(['test', 'live']),
  data: z.object({
    object: z.record(z.string(), z.unknown()).meta({
      description:
        'What the event is about, per type (docs/webhooks.md, "Event catalogue"); never card data beyond brand, last4 and expiry.',
    }),
  }),
}) satisfies z.ZodType<EventJson>;

const eventListSchema = z.object({
  object: z.literal('list'),
  data: z.array(eventSchema),
  hasMore: z.boolean().meta({ description: 'More events follow: ask again with startingAfter set to the last id.' }),
}) satisfies z.ZodType<EventListJson>;

const healthSchema = z.object({ status: z.literal('ok') });
const readySchema = z.object({
  status: z.enum(['ready', 'unavailable']),
  checks: z.record(z.string(), z.enum(['ok', 'unavailable'])),
});

type JsonObject = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  // refine/transform cannot be expressed in JSON Schema; they are documented in descriptions.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
}

function withPropertyDocs(schema: JsonObject, docs: Record<string, string>): JsonObject {
  const properties = schema.properties as Record<string, JsonObject>;
  for (const [name, description] of Object.entries(docs)) {
    const property = properties[name];
    if (!property) throw new Error(`openapi: no property ${name} to describe`);
    property.description = description;
  }
  return schema;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject) => ({ 'application/json': { schema } });

/** The /v1 routes' 403 is only ever this one; the catalogue's other 403s belong to the admin API. */
const V1_CODES_BY_STATUS: Partial<Record<number, ErrorCode[]>> = { 403: ['publishable_key_forbidden'] };

/** `codesByStatus`: a route's own codes for a status, where the catalogue's whole list would mislead. */
function errorResponses(
  statuses: number[],
  codesByStatus: Partial<Record<number, ErrorCode[]>> = V1_CODES_BY_STATUS,
): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const status of statuses) {
    const codes = codesByStatus[status] ?? errorCodes.filter((code) => ERROR_CATALOGUE[code].status === status);
    out[String(status)] = {
      description: `Error made by Tessera (${codes.map((c) => `\`${c}\``).join(', ') || 'see docs/errors.md'}).`,
      headers: { 'x-tessera-error': { $ref: '#/components/headers/TesseraError' } },
      content: json(ref('Error')),
    };
  }
  return out;
}

/** 403: a publishable key, which no /v1 route today accepts. */
const AUTH_ERRORS = [401, 403, 429, 500, 503, 504];
const BODY_ERRORS = [400, 413, 415];

const CVV_RECOLLECTED_DOC =
  "3 digits (4 for amex; test cards 3 or 4); an integer is left-padded with zeros. Consumed by the token's next render, or gone after CVV_TTL_SECONDS.";
const endpointIdParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: '`we_…`' };
const timingHeaders = {
  'x-tessera-request-id': { description: 'The request id (same as x-request-id).', schema: { type: 'string' } },
  'x-tessera-total-ms': { description: 'Milliseconds the gateway spent on the request, PSP included.', schema: { type: 'string' } },
};

export function buildOpenApiDocument(): JsonObject {
  const proxyRequest = withPropertyDocs(jsonSchema(proxyRequestSchema, 'input'), {
    method: `HTTP method toward the PSP, case-insensitive: ${PROXY_METHODS.join(', ')}.`,
    token: 'A token from POST /v1/token, of the same merchant.',
    pspUrl: 'Absolute http(s) URL of the PSP. Live keys: https only. Private, loopback and metadata addresses are refused.',
    pspHeaders:
      'Headers sent to the PSP as they are (hop-by-hop headers removed). The Content-Type decides how placeholder values are encoded.',
    pspBody:
      'Body template. Placeholders [CARD_NUMBER], [CARD_EXPIRY_MONTH], [CARD_EXPIRY_YEAR], [CARD_CVV], [CARD_HOLDER] are filled, encoded for the Content-Type (JSON string for json types, form, XML text for xml types; other types take digits raw and refuse [CARD_HOLDER]). get/delete may omit it.',
  });
  const cardFieldDocs = {
    number: 'Digits, spaces and hyphens; 12-19 digits, Luhn-valid. Test keys accept only the published test cards.',
    expiryMonth: '1-12',
    expiryYear: 'Four digits; not expired; at most 20 years ahead.',
    cvv: '3 digits (4 for amex); an integer is left-padded with zeros. Kept only for CVV_TTL_SECONDS.',
  };
  const tokenCreate = withPropertyDocs(jsonSchema(tokenCreateSchema, 'input'), {
    ...cardFieldDocs,
    dedupe:
      "true: if this merchant already has a token for this card number in this mode (made with or without dedupe; not deleted, not provisional), answer it (200) updated with this request's expiry, holderName (when given) and cvv (when given) instead of creating one (201).",
    aliasFormats:
      'Distinct formats, one alias each: card_bin_last4, card_last4, uuid (docs/api.md, Aliases). A deduplicated token keeps the aliases it has and gets the formats it lacks. A number that is one of your live aliases is refused (number_is_alias).',
  });
  const tokenUpdate = withPropertyDocs(jsonSchema(tokenUpdateSchema, 'input'), {
    expiryMonth: '1-12; give it with expiryYear.',
    expiryYear: 'Four digits; not expired; at most 20 years ahead; give it with expiryMonth.',
    holderName: 'The new card holder name.',
  });
  const cvcInput = withPropertyDocs(jsonSchema(cvcInputSchema, 'input'), { cvv: CVV_RECOLLECTED_DOC });
  const tokenParam = {
    name: 'token',
    in: 'path',
    required: true,
    description: 'The token (`tok.…`) or one of its aliases (docs/api.md, Aliases).',
    schema: { type: 'string' },
  };

  return {
    openapi: '3.1.0',
    info: {
      title: 'Tessera API',
      version: '1.0.0',
      description:
        'Card tokenization vault and payment proxy. Every /v1 route except this document needs the x-api-key header ' +
        'with a secret key (tsk_…); a publishable key (tpk_…, for browser card collection on the fields service, docs/browser.md) gets 403 publishable_key_forbidden. ' +
        'Errors made by Tessera carry the header x-tessera-error; PSP responses passed through never do.',
    },
    servers: [{ url: '/', description: 'This gateway (paths include the /v1 version segment).' }],
    security: [{ apiKey: [] }],
    paths: {
      '/v1/token': {
        post: {
          operationId: 'createToken',
          summary: 'Tokenize a card',
          requestBody: { required: true, content: json(ref('TokenCreate')) },
          responses: {
            '200': { description: 'dedupe: the existing token for this card, updated.', content: json(ref('TokenRecord')) },
            '201': { description: 'The token record.', content: json(ref('TokenRecord')) },
            ...errorResponses([...BODY_ERRORS, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/token/{token}': {
        get: {
          operationId: 'getToken',
          summary: 'Read a token record (never the PAN or CVV)',
          parameters: [tokenParam],
          responses: {
            '200': { description: 'The token record.', content: json(ref('TokenRecord')) },
            ...errorResponses([404, ...AUTH_ERRORS]),
          },
        },
        patch: {
          operationId: 'updateToken',
          summary: 'Change the expiry and/or holder name of a stored card (a re-issued card with the same number)',
          description:
            'The card number never changes: a new number is a new token. The expiry follows the rules of POST /v1/token ' +
            "(not expired, at most 20 years ahead) and moves the token's expiresAt with it (a provisional token keeps its " +
            'deadline). The CVV is left as it is. Idempotent by nature: the same body gives the same record.',
          parameters: [tokenParam],
          requestBody: { required: true, content: json(ref('TokenUpdate')) },
          responses: {
            '200': { description: 'The updated token record.', content: json(ref('TokenRecord')) },
            ...errorResponses([...BODY_ERRORS, 404, ...AUTH_ERRORS]),
          },
        },
        delete: {
          operationId: 'deleteToken',
          summary: 'Delete a token and its card data',
          parameters: [tokenParam],
          responses: { '204': { description: 'Deleted.' }, ...errorResponses([404, ...AUTH_ERRORS]) },
        },
      },
      '/v1/token/{token}/cvc': {
        post: {
          operationId: 'recollectCvc',
          summary: 'Attach a freshly collected CVV to an existing token',
          description:
            'For a returning customer who re-enters the CVC: under the same rules as a CVV given at tokenization, it is used ' +
            'by the next render of [CARD_CVV] only (then 422 cvv_unavailable) and gone after CVV_TTL_SECONDS; cvvAvailable ' +
            'turns true until then. It replaces a CVV not used yet. Send an Idempotency-Key to retry safely. From a browser, ' +
            'open a CVC session (POST /v1/token/{token}/cvc-sessions) and use the CVC-only field of tessera.js so your page ' +
            'never sees the CVC.',
          parameters: [tokenParam],
          requestBody: { required: true, content: json(ref('CvcInput')) },
          responses: {
            '200': { description: 'The token record, cvvAvailable true.', content: json(ref('TokenRecord')) },
            ...errorResponses([...BODY_ERRORS, 404, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/token/{token}/cvc-sessions': {
        post: {
          operationId: 'openCvcSession',
          summary: 'Open a CVC session: the single-use grant tessera.cvcField needs to re-collect this token’s CVC',
          description:
            'Secret key only. The answer’s `secret` is shown once (only its hash is stored); hand `{ token, secret }` to the ' +
            'checkout page for `tessera.cvcField({ cvcSession })`. It lets one CVC be attached to this token, once, within ' +
            'CVC_SESSION_TTL_SECONDS (10 min); a failed attach (e.g. a CVC of the wrong length) leaves it usable. No body, or `{}`.',
          parameters: [tokenParam],
          requestBody: { required: false, content: json(ref('CvcSessionCreate')) },
          responses: {
            '201': { description: 'The grant.', content: json(ref('CvcSession')) },
            ...errorResponses([...BODY_ERRORS, 404, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/token/{token}/retain': {
        post: {
          operationId: 'retainToken',
          summary: 'Keep a provisional (browser-made) token: it becomes an ordinary token',
          description:
            'A token made in a browser expires after BROWSER_TOKEN_TTL_SECONDS unless the merchant retains it with a secret key; ' +
            'it then lives until the card expires (plus grace), like a token from POST /v1/token. Idempotent: retaining an ' +
            'ordinary or already retained token answers the same record. No body, or `{}`.',
          parameters: [tokenParam],
          requestBody: { required: false, content: json(ref('RetainRequest')) },
          responses: {
            '200': { description: 'The token record, provisional false.', content: json(ref('TokenRecord')) },
            ...errorResponses([...BODY_ERRORS, 404, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/form-sessions': {
        post: {
          operationId: 'createFormSession',
          summary: 'Open a hosted payment page (form session) for one shopper',
          description:
            'Secret key only. returnUrl (and cancelUrl) must match a registered return URL of the merchant exactly (admin API ' +
            '/admin/v1/merchants/{merchantId}/return-urls, dashboard or `npm run keys -- return-urls set`); otherwise ' +
            '400 return_url_not_registered. Send the shopper to `url`; after the card is tokenized the page answers 303 to ' +
            'returnUrl with ?session, status, timestamp and signature (HMAC-SHA256, docs/browser.md). Single use; expires after 30 min. ' +
            'With amount and currency the page shows the amount; with a completionUrl Tessera calls it with each card before the ' +
            'redirect (signed Tessera-Signature header; docs/api.md, "The completion call"), a decline is shown on the page and the ' +
            'shopper may try another card in the same session (up to 5).',
          requestBody: { required: true, content: json(ref('CreateFormSession')) },
          responses: {
            '201': { description: 'The open session.', content: json(ref('FormSession')) },
            ...errorResponses([...BODY_ERRORS, ...AUTH_ERRORS]),
          },
        },
        get: {
          operationId: 'listFormSessions',
          summary: 'List the merchant’s form sessions of the key’s mode, newest first',
          description:
            'Sessions stay listed while they can be read (FORM_SESSION_TTL_SECONDS plus 24 hours). With status, at most 2000 ' +
            'sessions are read per call.',
          parameters: [
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
            {
              name: 'startingAfter',
              in: 'query',
              required: false,
              schema: { type: 'string' },
              description: 'The id of the last session of the previous page.',
            },
            {
              name: 'status',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: ['open', 'completed', 'expired', 'canceled'] },
            },
          ],
          responses: {
            '200': { description: 'One page of sessions.', content: json(ref('FormSessionList')) },
            ...errorResponses([400, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/form-sessions/{id}': {
        get: {
          operationId: 'getFormSession',
          summary: 'Read a form session: its status and, once completed, the token and card',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The session.', content: json(ref('FormSession')) },
            ...errorResponses([404, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/webhook-endpoints': {
        post: {
          operationId: 'createWebhookEndpoint',
          summary: 'Add a webhook endpoint for the key’s merchant and mode; its signing secret is shown only here',
          description:
            'Secret key only. url: https (test keys: also http), no credentials or fragment; whether its address may be reached ' +
            'is decided at delivery by the egress policy. At most 16 endpoints per merchant and mode (400 ' +
            'webhook_endpoint_limit_reached). Honours Idempotency-Key: a retry answers the first endpoint and its secret.',
          requestBody: { required: true, content: json(ref('CreateWebhookEndpoint')) },
          responses: {
            '201': { description: 'The endpoint, with its secret.', content: json(ref('WebhookEndpoint')) },
            ...errorResponses([...BODY_ERRORS, 409, ...AUTH_ERRORS], {
              ...V1_CODES_BY_STATUS,
              409: ['idempotency_key_reused', 'idempotency_in_progress', 'idempotent_replay_unavailable'],
            }),
          },
        },
        get: {
          operationId: 'listWebhookEndpoints',
          summary: 'List the webhook endpoints of the key’s merchant and mode, oldest first (without secrets)',
          responses: {
            '200': { description: 'Every endpoint.', content: json(ref('WebhookEndpointList')) },
            ...errorResponses(AUTH_ERRORS),
          },
        },
      },
      '/v1/webhook-endpoints/{id}': {
        get: {
          operationId: 'getWebhookEndpoint',
          summary: 'Read a webhook endpoint (without its secret)',
          parameters: [endpointIdParam],
          responses: {
            '200': { description: 'The endpoint.', content: json(ref('WebhookEndpoint')) },
            ...errorResponses([404, ...AUTH_ERRORS], { ...V1_CODES_BY_STATUS, 404: ['webhook_endpoint_not_found'] }),
          },
        },
        delete: {
          operationId: 'deleteWebhookEndpoint',
          summary: 'Delete a webhook endpoint: nothing more is sent to it',
          parameters: [endpointIdParam],
          responses: {
            '204': { description: 'Deleted.' },
            ...errorResponses([404, ...AUTH_ERRORS], { ...V1_CODES_BY_STATUS, 404: ['webhook_endpoint_not_found'] }),
          },
        },
      },
      '/v1/webhook-endpoints/{id}/rotate-secret': {
        post: {
          operationId: 'rotateWebhookSecret',
          summary: 'Give a webhook endpoint a new signing secret; the old one keeps signing beside it for expiresInSeconds',
          description: 'During the overlap each delivery carries one v1= signature per valid secret. No body, or `{}`: a 24-hour overlap.',
          parameters: [endpointIdParam],
          requestBody: { required: false, content: json(ref('RotateWebhookSecret')) },
          responses: {
            '200': { description: 'The endpoint, with its new secret.', content: json(ref('WebhookEndpoint')) },
            ...errorResponses([...BODY_ERRORS, 404, ...AUTH_ERRORS], { ...V1_CODES_BY_STATUS, 404: ['webhook_endpoint_not_found'] }),
          },
        },
      },
      '/v1/events': {
        get: {
          operationId: 'listEvents',
          summary: 'List the events of the key’s merchant and mode, newest first',
          description: 'Events are kept EVENT_RETENTION_DAYS (30) days.',
          parameters: [
            { name: 'type', in: 'query', required: false, schema: { type: 'string', enum: [...EVENT_TYPES] } },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
            {
              name: 'startingAfter',
              in: 'query',
              required: false,
              schema: { type: 'string' },
              description: 'The id of the last event of the previous page.',
            },
          ],
          responses: {
            '200': { description: 'One page of events.', content: json(ref('EventList')) },
            ...errorResponses([400, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/events/{id}': {
        get: {
          operationId: 'getEvent',
          summary: 'Read an event',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The event.', content: json(ref('Event')) },
            ...errorResponses([404, ...AUTH_ERRORS], { ...V1_CODES_BY_STATUS, 404: ['event_not_found'] }),
          },
        },
      },
      '/v1/proxy': {
        post: {
          operationId: 'forwardToPsp',
          summary: 'Send a request to a PSP with placeholders filled from the vault',
          description:
            "The PSP's status, headers (minus hop-by-hop headers) and body bytes come back unchanged, except that the PSP's " +
            'x-tessera-*, x-request-id and idempotent-replayed headers are renamed x-psp-<name>, and its Set-Cookie, ' +
            'Access-Control-*, Strict-Transport-Security, Clear-Site-Data, Alt-Svc, NEL, Report-To and Reporting-Endpoints ' +
            'headers are dropped. Tessera adds x-request-id, x-tessera-request-id, x-tessera-total-ms and, when the PSP ' +
            'answered, x-tessera-psp-ms.',
          requestBody: { required: true, content: json(ref('ProxyRequest')) },
          responses: {
            default: {
              description: "The PSP's response, passed through (any status), or an error made by Tessera (x-tessera-error set).",
              headers: {
                ...timingHeaders,
                'x-tessera-psp-ms': {
                  description: 'Milliseconds from sending to the PSP to its last body byte.',
                  schema: { type: 'string' },
                },
              },
            },
            ...errorResponses([...BODY_ERRORS, 404, 422, ...AUTH_ERRORS, 502]),
          },
        },
      },
      '/v1/proxy/dry-run': {
        post: {
          operationId: 'dryRunProxy',
          summary: 'Show what POST /v1/proxy would send, masked; nothing is sent',
          requestBody: { required: true, content: json(ref('ProxyRequest')) },
          responses: {
            '200': { description: 'The masked request and the verdicts.', headers: timingHeaders, content: json(ref('DryRun')) },
            ...errorResponses([...BODY_ERRORS, 404, ...AUTH_ERRORS]),
          },
        },
      },
      '/v1/forward-proxy/ca.pem': {
        get: {
          operationId: 'getForwardProxyCa',
          summary: "The merchant's forward-proxy CA certificate, for its PSP clients to trust",
          description:
            'The forward proxy (FORWARD_PROXY_PORT, docs/proxies.md) terminates TLS for the hosts of the merchant’s outbound routes ' +
            'with leaf certificates signed by this CA; its key never leaves the vault. One CA per merchant, for both modes, ' +
            'made on first use. A secret key is required.',
          responses: {
            '200': {
              description: 'The CA certificate (PEM).',
              content: { 'application/x-pem-file': { schema: { type: 'string' } } },
            },
            ...errorResponses([...AUTH_ERRORS]),
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          summary: 'This document',
          description: 'Public (no API key): it holds no secrets, and tools and code generators fetch it before they have a key.',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'Liveness',
          security: [],
          responses: { '200': { description: 'The gateway process runs.', content: json(ref('Health')) } },
        },
      },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary: 'Readiness of the vault, the proxy and the key store',
          security: [],
          responses: {
            '200': { description: 'Ready.', content: json(ref('Ready')) },
            '503': { description: 'A component is down.', content: json(ref('Ready')) },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
      headers: {
        TesseraError: { description: 'The error code; present only on errors made by Tessera.', schema: { type: 'string' } },
      },
      schemas: {
        TokenCreate: tokenCreate,
        TokenUpdate: tokenUpdate,
        CvcInput: cvcInput,
        CvcSessionCreate: jsonSchema(cvcSessionCreateSchema, 'input'),
        ProxyRequest: proxyRequest,
        RetainRequest: jsonSchema(retainRequestSchema, 'input'),
        CreateFormSession: jsonSchema(createFormSessionSchema, 'input'),
        FormSession: jsonSchema(formSessionSchema, 'output'),
        FormSessionList: jsonSchema(formSessionListSchema, 'output'),
        CreateWebhookEndpoint: jsonSchema(createWebhookEndpointSchema, 'input'),
        RotateWebhookSecret: jsonSchema(rotateWebhookSecretSchema, 'input'),
        WebhookEndpoint: jsonSchema(webhookEndpointSchema, 'output'),
        WebhookEndpointList: jsonSchema(webhookEndpointListSchema, 'output'),
        Event: jsonSchema(eventSchema, 'output'),
        EventList: jsonSchema(eventListSchema, 'output'),
        TokenRecord: jsonSchema(tokenRecordSchema, 'output'),
        CvcSession: jsonSchema(cvcSessionSchema, 'output'),
        DryRun: jsonSchema(dryRunSchema, 'output'),
        Error: jsonSchema(errorEnvelopeSchema, 'output'),
        Health: jsonSchema(healthSchema, 'output'),
        Ready: jsonSchema(readySchema, 'output'),
      },
    },
  };
}
