import { shredOrderPathSchema, shredRequestSchema } from '../app/shredOrders';
import { exportOrderPathSchema, exportRequestSchema, recipientPathSchema, recipientRegistrationSchema } from '../app/cardExports';
import { cardImportPathSchema, cardImportRequestSchema, type CardImportView } from '../app/cardImports';
import { z } from 'zod';
import { mfaConfirmSchema, signInSchema, type SessionView } from '../app/adminSessions';
import { createKeyRequestSchema, keyTestRequestSchema, restrictionChangesSchema } from '../app/apiKeys';
import { listRequestsQuerySchema, requestDetailQuerySchema, requestStatsQuerySchema, type RequestPage } from '../app/requestLog';
import { auditQuerySchema } from '../app/auditTrail';
import { merchantPathSchema, merchantQuerySchema, pspHostsSchema, type PspHostsView } from '../app/merchants';
import { formSigningSecretRequestSchema, returnUrlsSchema, type ReturnUrlsView } from '../app/returnUrls';
import type { MinuteStats, RequestLogEntry } from '@tessera/merchant-data';
import {
  pageInventoryExportQuerySchema,
  pageInventoryQuerySchema,
  pagePolicyQuerySchema,
  policyAcceptanceSchema,
  scriptAuthorizationSchema,
} from '../app/pageInventory';
import type { KeyView } from './keyRoutes';
import {
  webhookDeliveriesQuerySchema,
  webhookEndpointCreateSchema,
  webhookModeQuerySchema,
  webhookSecretRotateSchema,
  type WebhookEndpointView,
} from '../app/webhookEndpoints';
import type { WebhookDeliveryAttempt } from '../app/webhookDeliveriesPort';
import { errorEnvelopeSchema } from '@tessera/edge';
import { routeDocumentSchema, type DryRunResult, type StoredRoute } from '@tessera/routes';
import { dryRunRequestSchema, routeFileQuerySchema, routeListQuerySchema, routePathSchema } from '../app/proxyRoutes';
import { ADMIN_BASE } from './adminRouter';

/**
 * The admin API (`/admin/v1`) for the OpenAPI document, generated like the /v1 part
 * (../openapi.ts): every request body, query and path parameter below is the zod schema the
 * route parses with (validation.ts), so the document cannot drift from the validation; a test
 * compares the paths with the router. Response shapes are tied to the handlers' types with
 * `satisfies`, so a changed field is a compile error here.
 */

const keyViewSchema = z.object({
  id: z.string(),
  merchantId: z.string(),
  mode: z.string().meta({ description: '`test` or `live`' }),
  kind: z.enum(['secret', 'publishable']).meta({
    description: '`secret` (`tsk_…`): every /v1 route. `publishable` (`tpk_…`): browser card collection only; 403 elsewhere.',
  }),
  key: z.string().meta({ description: 'Prefix and last four characters: enough to recognise a key, never to use it.' }),
  allowedCidrs: z.array(z.string()),
  allowedDomains: z.array(z.string()),
  allowedOrigins: z.array(z.string()).meta({ description: 'Publishable keys only: exact origins (scheme, host, port).' }),
  status: z.enum(['active', 'revoked', 'expired']).meta({ description: '`expired`: the scheduled expiry (`expiresAt`) has passed.' }),
  createdAt: z.string(),
  updatedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  expiresAt: z.string().nullable().meta({
    description:
      'Scheduled expiry of an overlapping rotation (`npm run keys -- revoke <id> --after 24h`); the key is refused from then on.',
  }),
  lastUsedAt: z.string().nullable(),
  lastUsedIp: z.string().nullable(),
  underAttackUntil: z.string().nullable().meta({
    description:
      'Set while the key is under card-testing attack (browser tokenizations past BROWSER_TOKENS_PER_KEY_PER_MINUTE): until when every card needs a proof of work from the shopper’s browser. The dashboard shows a banner.',
  }),
}) satisfies z.ZodType<KeyView>;

const sessionSchema = z.object({
  operator: z.object({
    id: z.string(),
    email: z.string(),
    merchantId: z.string().nullable(),
    mfaEnabled: z.boolean(),
    recoveryCodesLeft: z.number().int().nullable(),
  }),
  csrfToken: z.string().meta({ description: 'Send it back as x-csrf-token on every state-changing admin request.' }),
  expiresAt: z.string(),
  mfaRequired: z.boolean(),
  mfaEnrolmentRequired: z.boolean().meta({ description: 'True: this session may only set up the second factor (and log out).' }),
}) satisfies z.ZodType<SessionView>;

const pspCallFields = {
  host: z.string().meta({ description: 'host[:port] of pspUrl; `[card number]` when it looked like one.' }),
  method: z.string(),
  status: z.int().nullable().meta({ description: 'The PSP’s status; null when it was not reached.' }),
  ms: z.number().nullable().meta({ description: 'Time the PSP took; null when it was not reached.' }),
};

const requestEntryFields = {
  id: z.string().meta({ description: 'The entry’s id (also a list cursor).' }),
  at: z.string(),
  requestId: z.string(),
  keyId: z.string(),
  mode: z.string(),
  method: z.string(),
  route: z.string().meta({ description: 'The route pattern, such as `/v1/token/:token`.' }),
  path: z.string().meta({ description: 'The route with its token filled in; never the query.' }),
  status: z.int(),
  code: z.string().nullable().meta({ description: 'Tessera’s error code (`x-tessera-error`); null for a success or a PSP’s own answer.' }),
  ms: z.number().meta({ description: 'Total time in the gateway, PSP time included.' }),
  aborted: z.literal(true).optional().meta({ description: 'The client went away before the answer was sent.' }),
};

const requestEntrySchema = z.object({
  ...requestEntryFields,
  psp: z
    .object({
      ...pspCallFields,
      token: z.string(),
      bodyTemplate: z.string().nullable().meta({
        description:
          'The pspBody as sent, with its placeholders (never the rendered body); anything card-number-like is `[redacted]`; at most 4096 characters.',
      }),
      bodyTemplateTruncated: z.literal(true).optional(),
      headerNames: z.array(z.string()).meta({ description: 'Names of the pspHeaders; never their values.' }),
    })
    .optional()
    .meta({ description: '/v1/proxy and /v1/proxy/dry-run only.' }),
}) satisfies z.ZodType<RequestLogEntry>;

const minuteStatsFields = {
  requests: z.int(),
  clientErrors: z.int().meta({ description: '4xx answers.' }),
  serverErrors: z.int().meta({ description: '5xx answers.' }),
  errorRate: z.number().meta({ description: '(4xx + 5xx) / requests; 0 without requests.' }),
  pspCalls: z.int(),
  pspP50Ms: z.number().nullable().meta({ description: 'Median PSP time, to within 19 % (latency buckets); null without PSP calls.' }),
  pspP99Ms: z.number().nullable(),
};

const webhookEndpointSchema = z.object({
  id: z.string().meta({ description: '`we_…`' }),
  object: z.literal('webhook_endpoint'),
  merchantId: z.string(),
  mode: z.enum(['test', 'live']),
  url: z.string(),
  enabledEvents: z.array(z.string()),
  status: z.enum(['enabled', 'disabled']).meta({ description: '`disabled`: delivery stopped after repeated failures; enable it again.' }),
  disabledReason: z.string().nullable().meta({ description: 'Why delivery stopped (`failing_since:<iso>`); never a response body.' }),
  createdAt: z.string(),
  previousSecretExpiresAt: z
    .string()
    .nullable()
    .meta({ description: 'After a rotation: until when the previous secret still signs beside the new one.' }),
}) satisfies z.ZodType<WebhookEndpointView>;

const webhookDeliverySchema = z.object({
  eventId: z.string(),
  eventType: z.string(),
  attempt: z.int(),
  outcome: z
    .string()
    .meta({ description: '`succeeded` (2xx), `failed` (another attempt is scheduled) or `gave_up` (the retry window is over).' }),
  responseStatus: z.int().nullable().meta({ description: 'The receiver’s HTTP status; null when none came back.' }),
  latencyMs: z.number().nullable(),
  error: z.string().nullable().meta({ description: 'Why an attempt without a status failed (`timeout`, `unreachable`, …).' }),
  at: z.string(),
  nextAttemptAt: z.string().nullable().meta({ description: 'After a `failed` attempt: when the next one is due.' }),
}) satisfies z.ZodType<WebhookDeliveryAttempt>;

const operatorRefSchema = z.object({ id: z.string(), email: z.string() });
const shredOrderViewSchema = z.object({
  id: z.string(),
  merchantId: z.string(),
  mode: z.enum(['test', 'live', 'all']),
  reason: z.string(),
  requestedBy: operatorRefSchema,
  requestedAt: z.string(),
  status: z.enum(['pending', 'approved', 'shredding', 'done', 'cancelled']).meta({
    description:
      '`pending` (waits for a second operator), `approved` (queued for the vault), `shredding` (keys destroyed, records being swept), `done`, `cancelled`.',
  }),
  approvedBy: operatorRefSchema.optional(),
  approvedAt: z.string().optional(),
  cancelledBy: operatorRefSchema.optional(),
  keyDestroyedAt: z.string().optional().meta({ description: 'From this moment every token of the merchant (and mode) is unreadable.' }),
  completedAt: z.string().optional(),
  tokensSwept: z.int().optional(),
});

const exportRecipientViewSchema = z.object({
  fingerprint: z.string().meta({ description: 'Upper-case hex: check it with the recipient before requesting an export to it.' }),
  label: z.string(),
  publicKey: z.string(),
  algorithm: z.string(),
  registeredBy: operatorRefSchema,
  registeredAt: z.string(),
});
const exportOrderViewSchema = z.object({
  id: z.string(),
  merchantId: z.string(),
  mode: z.enum(['test', 'live']),
  format: z.enum(['jsonl', 'csv', 'stripe']),
  tokens: z.array(z.string()).optional().meta({ description: 'Absent: every token of the merchant and mode.' }),
  recipient: z.object({ fingerprint: z.string(), label: z.string() }),
  reason: z.string(),
  requestedBy: operatorRefSchema,
  requestedAt: z.string(),
  status: z.enum(['pending', 'approved', 'running', 'done', 'failed', 'cancelled']).meta({
    description:
      '`pending` (waits for a second operator), `approved` (queued for the vault), `running`, `done` (file ready until `expiresAt`), `failed` (see `failure`), `cancelled`.',
  }),
  approvedBy: operatorRefSchema.optional(),
  approvedAt: z.string().optional(),
  cancelledBy: operatorRefSchema.optional(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  exported: z.int().optional().meta({ description: 'Cards in the file.' }),
  missing: z.int().optional().meta({ description: 'Listed tokens that named no card of the merchant and mode.' }),
  bytes: z.int().optional(),
  chunks: z.int().optional(),
  expiresAt: z.string().optional(),
  failure: z.string().optional(),
});
const cardImportViewSchema = z.object({
  id: z.string(),
  merchantId: z.string(),
  mode: z.string(),
  format: z.string(),
  status: z.enum(['creating', 'awaiting_upload', 'queued', 'running', 'done', 'failed']).meta({
    description:
      '`creating` (a vault is making the import key), `awaiting_upload` (publicKey is ready: encrypt the file to it), `queued`, `running`, `done` (the report is ready), `failed` (see failure).',
  }),
  createdAt: z.string(),
  publicKey: z
    .string()
    .nullable()
    .meta({ description: 'The armored OpenPGP key the old provider encrypts the file to; null while creating.' }),
  publicKeyFingerprint: z.string().nullable(),
  counts: z.object({
    records: z.int().nullable().meta({ description: 'Records in the file, known once its integrity was checked.' }),
    processed: z.int(),
    imported: z.int(),
    duplicates: z.int(),
    failed: z.int(),
  }),
  uploadedBytes: z.int(),
  failure: z.string().nullable().meta({ description: 'A code such as file_not_decryptable or report_key_unusable; never card data.' }),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  reportReady: z.boolean(),
}) satisfies z.ZodType<CardImportView>;

const schemas = {
  // Request bodies: the schemas the routes validate with.
  AdminLogin: signInSchema,
  AdminMfaEnrolment: z.object({
    secret: z.string().meta({ description: 'Base32; shown once.' }),
    otpauthUri: z.string(),
    digits: z.number().int(),
    period: z.number().int(),
  }),
  AdminMfaConfirm: mfaConfirmSchema,
  AdminSession: sessionSchema,
  AdminMerchants: z.object({ merchants: z.array(z.string()) }),
  AdminKey: keyViewSchema,
  AdminKeyList: z.object({ keys: z.array(keyViewSchema) }),
  // The validating schemas of the use cases themselves (app/apiKeys.ts).
  AdminKeyCreate: createKeyRequestSchema(),
  AdminKeyCreated: z.object({ apiKey: z.string().meta({ description: 'Shown once, never stored.' }), key: keyViewSchema }),
  AdminKeyUpdate: restrictionChangesSchema(),
  AdminKeyResult: z.object({ key: keyViewSchema }),
  AdminKeyTest: keyTestRequestSchema,
  AdminKeyTestResult: z.object({
    accepted: z.boolean(),
    status: z.int(),
    code: z.string().nullable(),
    message: z.string(),
    clientIp: z.string().nullable(),
    origin: z.string().nullable(),
    key: keyViewSchema.nullable(),
  }),
  AdminDetokenizations: z.object({
    entries: z.array(
      z.object({
        id: z.string(),
        at: z.string(),
        requestId: z.string(),
        merchantId: z.string(),
        keyId: z.string(),
        token: z.string(),
        pspHost: z.string(),
        method: z.string(),
        status: z.number().int(),
        code: z.string().nullable(),
      }),
    ),
  }),
  AdminPspHostsUpdate: pspHostsSchema(),
  AdminPspHosts: z.object({
    merchantId: z.string(),
    pspHosts: z.array(z.string()).meta({ description: 'Canonical entries; empty: any public host.' }),
    updatedAt: z.string().nullable(),
  }) satisfies z.ZodType<PspHostsView>,
  AdminReturnUrlsUpdate: returnUrlsSchema(),
  AdminReturnUrls: z.object({
    merchantId: z.string(),
    returnUrls: z.array(z.string()).meta({ description: 'Canonical entries (scheme://host[:port]/path).' }),
    updatedAt: z.string().nullable(),
  }) satisfies z.ZodType<ReturnUrlsView>,
  AdminFormSigningSecretRequest: formSigningSecretRequestSchema,
  AdminRouteDocument: routeDocumentSchema,
  AdminRoutes: z.object({
    merchantId: z.string(),
    routes: z.array(z.object({ route: routeDocumentSchema, createdAt: z.string(), updatedAt: z.string() })),
  }),
  AdminRoute: z.object({ route: routeDocumentSchema, createdAt: z.string(), updatedAt: z.string() }) satisfies z.ZodType<
    StoredRoute,
    unknown
  >,
  AdminAppliedRoute: z.object({
    route: routeDocumentSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
    outcome: z.enum(['created', 'updated', 'unchanged']),
    changed: z.array(z.string()).meta({ description: 'For `updated`: the top-level fields that changed.' }),
  }),
  AdminRouteFile: z.string().meta({
    description:
      'A route file, YAML or JSON (docs/routes.md): one route, a list, `{ routes: [...] }` or `---` documents. Every route is checked before any is applied.',
  }),
  AdminMerchantRoutes: z.object({
    routes: z.array(z.object({ merchantId: z.string(), route: routeDocumentSchema, createdAt: z.string(), updatedAt: z.string() })),
  }),
  AdminMerchantRoute: z.object({
    merchantId: z.string(),
    route: routeDocumentSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
    yaml: z.string().meta({ description: 'The document as YAML, as `npm run routes -- show` prints it.' }),
  }),
  AdminAppliedRouteFile: z.object({
    merchantId: z.string(),
    routes: z.array(
      z.object({
        route: routeDocumentSchema,
        createdAt: z.string(),
        updatedAt: z.string(),
        outcome: z.enum(['created', 'updated', 'unchanged']),
        changed: z.array(z.string()).meta({ description: 'For `updated`: the top-level fields that changed.' }),
      }),
    ),
  }),
  AdminRouteDryRunRequest: dryRunRequestSchema,
  AdminRouteDryRun: z.object({
    routeId: z.string(),
    kind: z.enum(['inbound', 'outbound']),
    outcome: z
      .enum(['forwarded', 'refused'])
      .meta({ description: '`refused`: card data in a place no filter names, and the route says refuse.' }),
    places: z.array(
      z.object({
        filterIndex: z.number().int(),
        store: z.enum(['number', 'expiry_month', 'expiry_year', 'expiry', 'cvv', 'holder']),
        value: z.string().meta({ description: 'Masked: a number to its first 6 and last 4, a CVV to ***.' }),
        becomes: z.string().meta({ description: 'A placeholder alias (inbound), a card data placeholder (outbound), or `unchanged`.' }),
      }),
    ),
    unmatchedCardData: z.number().int(),
    body: z.string().meta({ description: 'The request body as it would leave, with placeholders; every card-number-like run masked.' }),
  }) satisfies z.ZodType<DryRunResult>,
  AdminFormSigningSecret: z.object({
    merchantId: z.string(),
    mode: z.enum(['test', 'live']),
    signingSecret: z
      .string()
      .meta({ description: 'Verifies the signature on hosted-page returns (docs/browser.md); keep it on the server.' }),
  }),
  AdminRequestList: z.object({
    merchantId: z.string(),
    entries: z.array(z.object({ ...requestEntryFields, psp: z.object(pspCallFields).optional() })),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for older entries; null: no more.' }),
  }) satisfies z.ZodType<RequestPage>,
  AdminRequest: requestEntrySchema,
  AdminRequestStats: z.object({
    merchantId: z.string(),
    from: z.string(),
    to: z.string(),
    minutes: z.array(
      z.object({ at: z.string().meta({ description: 'Start of the minute.' }), ...minuteStatsFields }) satisfies z.ZodType<MinuteStats>,
    ),
    totals: z.object(minuteStatsFields),
  }),
  AdminPagePolicy: z.object({
    merchantId: z.string(),
    mode: z.enum(['test', 'live']),
    fieldsOrigin: z.string(),
    headers: z
      .record(z.string(), z.string())
      .meta({ description: 'Response headers for the payment page; `{NONCE}`: a fresh random value per response.' }),
    scriptTag: z.string().meta({ description: 'The line that loads tessera.js, with its SRI integrity.' }),
    reportUrl: z.string().meta({ description: 'Where CSP violation reports go (report-uri and Reporting-Endpoints).' }),
    notes: z.array(z.string()),
  }),
  AdminPageInventory: z.object({
    merchantId: z.string(),
    mode: z.enum(['test', 'live']),
    pages: z.array(
      z
        .object({
          id: z.string(),
          url: z.string().meta({ description: 'Origin and path of the page (never its query).' }),
          flagged: z.boolean().meta({ description: 'A new or changed script, or a weaker policy than the baseline.' }),
          flags: z.object({ newScripts: z.int(), changedScripts: z.int(), policyWeakened: z.boolean() }),
          policy: z.string().nullable().meta({ description: 'The meta Content-Security-Policy of the last report.' }),
          headerPolicy: z
            .string()
            .nullable()
            .meta({ description: 'The policy the last CSP violation report carried (the response header).' }),
          baselinePolicy: z.string().nullable(),
          policyWeakenings: z.array(z.string()),
          scripts: z.array(
            z
              .object({
                key: z.string(),
                url: z.string().nullable(),
                hash: z.string().nullable(),
                status: z.enum(['authorized', 'changed', 'new']),
                present: z.boolean(),
                firstSeenAt: z.string(),
                lastSeenAt: z.string(),
              })
              .loose(),
          ),
          events: z.array(z.object({ at: z.string(), kind: z.string(), detail: z.string() }).loose()),
          violations: z.array(z.object({ at: z.string(), blockedUrl: z.string(), directive: z.string() }).loose()),
        })
        .loose(),
    ),
  }),
  AdminPageInventoryExport: z
    .object({
      merchantId: z.string(),
      mode: z.enum(['test', 'live']),
      exportedAt: z.string(),
      exportedBy: z.string(),
      pages: z.array(z.object({}).loose()),
    })
    .meta({ description: 'Every page as in AdminPageInventory, with its whole kept history of events and violations.' }),
  AdminScriptAuthorization: scriptAuthorizationSchema,
  AdminPolicyAcceptance: policyAcceptanceSchema,
  AdminWebhookEndpoint: webhookEndpointSchema,
  AdminWebhookEndpointList: z.object({
    object: z.literal('list'),
    merchantId: z.string(),
    mode: z.enum(['test', 'live']),
    data: z.array(webhookEndpointSchema).meta({ description: 'Oldest first (at most 16 per mode).' }),
    hasMore: z.literal(false),
    eventTypes: z.array(z.string()).meta({ description: 'Every event type an endpoint may subscribe to (docs/webhooks.md).' }),
  }),
  AdminWebhookEndpointCreate: webhookEndpointCreateSchema,
  AdminWebhookSecretRotate: webhookSecretRotateSchema,
  AdminWebhookEndpointWithSecret: webhookEndpointSchema.extend({
    secret: z.string().meta({ description: '`whsec_…`: shown in this answer only.' }),
  }),
  AdminWebhookDeliveries: z.object({
    object: z.literal('list'),
    endpointId: z.string(),
    deliveries: z.array(webhookDeliverySchema).meta({ description: 'Newest first.' }),
    queued: z
      .object({ depth: z.int(), oldestCreatedAt: z.string().nullable() })
      .meta({ description: 'Events waiting for this endpoint (not delivered yet: retries and resends included).' }),
  }),
  AdminWebhookResend: z.object({ endpointId: z.string(), eventId: z.string(), status: z.literal('queued') }),
  AdminShredRequest: shredRequestSchema,
  AdminShredOrder: shredOrderViewSchema,
  AdminShredOrders: z.object({ orders: z.array(shredOrderViewSchema).meta({ description: 'Newest first (at most 100).' }) }),
  AdminExportRecipientRegistration: recipientRegistrationSchema,
  AdminExportRecipient: exportRecipientViewSchema,
  AdminExportRecipients: z.object({ recipients: z.array(exportRecipientViewSchema) }),
  AdminExportRequest: exportRequestSchema,
  AdminExportOrder: exportOrderViewSchema,
  AdminExportOrders: z.object({ orders: z.array(exportOrderViewSchema).meta({ description: 'Newest first (at most 100).' }) }),
  AdminCardImportRequest: cardImportRequestSchema,
  AdminCardImport: cardImportViewSchema,
  AdminAudit: z.object({ entries: z.array(z.object({ id: z.string(), at: z.string(), action: z.string() }).loose()) }),
};

type JsonObject = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonObject;
  return rest;
}

/** Query or path parameters from the object schema that parses them. */
function parametersOf(schema: z.ZodObject, where: 'query' | 'path'): JsonObject[] {
  const { properties, required = [] } = jsonSchema(schema) as { properties: Record<string, JsonObject>; required?: string[] };
  return Object.entries(properties).map(([name, { description, ...shape }]) => ({
    name,
    in: where,
    required: where === 'path' || required.includes(name),
    ...(description !== undefined ? { description } : {}),
    schema: shape,
  }));
}

export function adminOpenApiSchemas(): Record<string, JsonObject> {
  return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, jsonSchema(schema)]));
}

const ref = (name: keyof typeof schemas) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });
const errorRef = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const session = [{ adminSession: [], csrfToken: [] }];
const readSession = [{ adminSession: [] }];
const errors = (description: string) => ({ default: { description, content: errorRef } });

export const ADMIN_SECURITY_SCHEMES = {
  adminSession: { type: 'apiKey', in: 'cookie', name: 'tessera_admin', description: 'Set by POST /admin/v1/login.' },
  csrfToken: { type: 'apiKey', in: 'header', name: 'x-csrf-token', description: 'The csrfToken of the session.' },
};

/** A zod query schema as OpenAPI query parameters, so the document shows what the route validates. */
function queryParameters(schema: z.ZodType): JsonObject[] {
  const json = jsonSchema(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: 'query',
      required: json.required?.includes(name) ?? false,
      ...(description !== undefined ? { description } : {}),
      schema: rest,
    };
  });
}

export function adminOpenApiPaths(): Record<string, JsonObject> {
  const tags = ['admin'];
  const op = (operationId: string, summary: string, security: unknown, extra: JsonObject): JsonObject => ({
    operationId,
    summary,
    tags,
    security,
    ...extra,
    responses: { ...(extra.responses as JsonObject), ...errors('An error made by Tessera (401 admin_session_required, 403, 404, …).') },
  });
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const merchantPath = parametersOf(merchantPathSchema, 'path');
  const shredOrderPath = parametersOf(shredOrderPathSchema, 'path');
  const exportOrderPath = parametersOf(exportOrderPathSchema, 'path');
  const recipientPath = parametersOf(recipientPathSchema, 'path');
  const importPath = parametersOf(cardImportPathSchema, 'path');
  const routePath = parametersOf(routePathSchema, 'path');
  const merchantQuery = parametersOf(merchantQuerySchema, 'query');
  const auditQuery = parametersOf(auditQuerySchema, 'query');
  const webhookMode = queryParameters(webhookModeQuerySchema);
  const endpointId = { name: 'endpointId', in: 'path', required: true, schema: { type: 'string', pattern: '^we_[A-Za-z0-9_-]{32}$' } };
  return {
    [`${ADMIN_BASE}/login`]: {
      post: op('adminLogin', 'Log in to the dashboard (sets the session cookie)', [], {
        requestBody: { required: true, content: ref('AdminLogin') },
        responses: { '200': { description: 'The session.', content: ref('AdminSession') } },
      }),
    },
    [`${ADMIN_BASE}/session`]: {
      get: op('adminSession', 'The current session', readSession, {
        responses: { '200': { description: 'The session.', content: ref('AdminSession') } },
      }),
    },
    [`${ADMIN_BASE}/mfa/enrolment`]: {
      post: op('adminMfaEnrol', 'Start setting up the TOTP second factor (a new secret, to confirm within 10 minutes)', session, {
        responses: { '200': { description: 'The secret and its otpauth:// URI.', content: ref('AdminMfaEnrolment') } },
      }),
    },
    [`${ADMIN_BASE}/mfa/enrolment/confirm`]: {
      post: op('adminMfaConfirm', 'Turn the second factor on with a first code (ends every other session)', session, {
        requestBody: { required: true, content: ref('AdminMfaConfirm') },
        responses: {
          '200': {
            description: 'A new session, and the 10 recovery codes (shown once).',
            content: {
              'application/json': {
                schema: {
                  allOf: [
                    { $ref: '#/components/schemas/AdminSession' },
                    {
                      type: 'object',
                      properties: { recoveryCodes: { type: 'array', items: { type: 'string' } } },
                      required: ['recoveryCodes'],
                    },
                  ],
                },
              },
            },
          },
        },
      }),
    },
    [`${ADMIN_BASE}/logout`]: {
      post: op('adminLogout', 'End the session', session, { responses: { '204': { description: 'Logged out.' } } }),
    },
    [`${ADMIN_BASE}/merchants`]: {
      get: op('adminMerchants', 'Merchants this operator may manage', readSession, {
        responses: { '200': { description: 'Merchant ids.', content: ref('AdminMerchants') } },
      }),
    },
    [`${ADMIN_BASE}/keys`]: {
      get: op('adminListKeys', 'List API keys', readSession, {
        parameters: merchantQuery,
        responses: { '200': { description: 'Keys, newest first.', content: ref('AdminKeyList') } },
      }),
      post: op('adminCreateKey', 'Create an API key (shown once)', session, {
        requestBody: { required: true, content: ref('AdminKeyCreate') },
        responses: { '201': { description: 'The key.', content: ref('AdminKeyCreated') } },
      }),
    },
    [`${ADMIN_BASE}/keys/{id}`]: {
      patch: op('adminUpdateKey', 'Change a key’s IP, domain or origin restrictions', session, {
        parameters: [id],
        requestBody: { required: true, content: ref('AdminKeyUpdate') },
        responses: { '200': { description: 'The key.', content: ref('AdminKeyResult') } },
      }),
    },
    [`${ADMIN_BASE}/keys/{id}/revoke`]: {
      post: op('adminRevokeKey', 'Revoke a key (immediate)', session, {
        parameters: [id],
        responses: { '200': { description: 'The key.', content: ref('AdminKeyResult') } },
      }),
    },
    [`${ADMIN_BASE}/keys/test`]: {
      post: op('adminTestKey', 'Would the gateway accept this key (rotation step 3)?', session, {
        requestBody: { required: true, content: ref('AdminKeyTest') },
        responses: { '200': { description: 'The verdict.', content: ref('AdminKeyTestResult') } },
      }),
    },
    [`${ADMIN_BASE}/audit`]: {
      get: op('adminAudit', 'The audit log', readSession, {
        parameters: auditQuery,
        responses: { '200': { description: 'Entries, newest first.', content: ref('AdminAudit') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/psp-hosts`]: {
      get: op('adminGetPspHosts', 'The merchant’s PSP host allowlist', readSession, {
        parameters: merchantPath,
        responses: { '200': { description: 'The allowlist.', content: ref('AdminPspHosts') } },
      }),
      put: op('adminSetPspHosts', 'Replace the merchant’s PSP host allowlist (/v1/proxy refuses other hosts)', session, {
        parameters: merchantPath,
        requestBody: { required: true, content: ref('AdminPspHostsUpdate') },
        responses: { '200': { description: 'The allowlist.', content: ref('AdminPspHosts') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/return-urls`]: {
      get: op('adminGetReturnUrls', 'The merchant’s registered hosted-page return and cancel URLs', readSession, {
        parameters: merchantPath,
        responses: { '200': { description: 'The registered URLs.', content: ref('AdminReturnUrls') } },
      }),
      put: op('adminSetReturnUrls', 'Replace the merchant’s registered return and cancel URLs', session, {
        parameters: merchantPath,
        requestBody: { required: true, content: ref('AdminReturnUrlsUpdate') },
        responses: { '200': { description: 'The registered URLs.', content: ref('AdminReturnUrls') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/routes`]: {
      get: op('adminListRoutes', 'The merchant’s proxy routes (docs/routes.md)', readSession, {
        parameters: merchantPath,
        responses: { '200': { description: 'Every route, by id.', content: ref('AdminRoutes') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/routes/{routeId}`]: {
      get: op('adminGetRoute', 'One proxy route', readSession, {
        parameters: routePath,
        responses: { '200': { description: 'The route document and when it was applied.', content: ref('AdminRoute') } },
      }),
      put: op('adminApplyRoute', 'Create or replace a proxy route (audited; applies from the next request)', session, {
        parameters: routePath,
        requestBody: { required: true, content: ref('AdminRouteDocument') },
        responses: {
          '200': { description: 'Replaced, or unchanged.', content: ref('AdminAppliedRoute') },
          '201': { description: 'Created.', content: ref('AdminAppliedRoute') },
        },
      }),
      delete: op('adminDeleteRoute', 'Delete a proxy route (audited)', session, {
        parameters: routePath,
        responses: { '204': { description: 'Deleted.' } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/routes/{routeId}/dry-run`]: {
      post: op(
        'adminDryRunRoute',
        'What a sample request becomes on the route: placeholders and masked values, nothing sent or stored',
        session,
        {
          parameters: routePath,
          requestBody: { required: true, content: ref('AdminRouteDryRunRequest') },
          responses: { '200': { description: 'The dry run.', content: ref('AdminRouteDryRun') } },
        },
      ),
    },
    [`${ADMIN_BASE}/routes`]: {
      get: op('adminListRoutesInReach', 'Proxy routes: one merchant’s, or those of every merchant in reach (docs/routes.md)', readSession, {
        parameters: queryParameters(routeListQuerySchema),
        responses: { '200': { description: 'Routes by merchant, then id.', content: ref('AdminMerchantRoutes') } },
      }),
      post: op(
        'adminApplyRouteFile',
        'Apply a route file, YAML or JSON, to a merchant (each change audited; applies from the next request)',
        session,
        {
          parameters: queryParameters(routeFileQuerySchema),
          requestBody: {
            required: true,
            content: {
              'application/yaml': { schema: { $ref: '#/components/schemas/AdminRouteFile' } },
              // JSON is read as YAML: one route, a list, or `{ routes: [...] }`.
              'application/json': {
                schema: {
                  oneOf: [
                    { $ref: '#/components/schemas/AdminRouteDocument' },
                    { type: 'array', items: { $ref: '#/components/schemas/AdminRouteDocument' } },
                    {
                      type: 'object',
                      required: ['routes'],
                      additionalProperties: false,
                      properties: { routes: { type: 'array', items: { $ref: '#/components/schemas/AdminRouteDocument' } } },
                    },
                  ],
                },
              },
            },
          },
          responses: {
            '200': { description: 'Every route replaced or unchanged.', content: ref('AdminAppliedRouteFile') },
            '201': { description: 'At least one route created.', content: ref('AdminAppliedRouteFile') },
          },
        },
      ),
    },
    [`${ADMIN_BASE}/routes/{merchantId}/{routeId}`]: {
      get: op('adminGetMerchantRoute', 'One proxy route', readSession, {
        parameters: routePath,
        responses: { '200': { description: 'The route document and when it was applied.', content: ref('AdminMerchantRoute') } },
      }),
      delete: op('adminDeleteMerchantRoute', 'Delete a proxy route (audited)', session, {
        parameters: routePath,
        responses: { '204': { description: 'Deleted.' } },
      }),
    },
    [`${ADMIN_BASE}/routes/{merchantId}/{routeId}/dry-run`]: {
      post: op(
        'adminDryRunMerchantRoute',
        'What a sample request becomes on the route: placeholders and masked values, nothing sent or stored',
        session,
        {
          parameters: routePath,
          requestBody: { required: true, content: ref('AdminRouteDryRunRequest') },
          responses: { '200': { description: 'The dry run.', content: ref('AdminRouteDryRun') } },
        },
      ),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/form-signing-secret`]: {
      post: op('adminShowFormSigningSecret', 'Show the secret that signs the merchant’s hosted-page returns (audited)', session, {
        parameters: merchantPath,
        requestBody: { required: true, content: ref('AdminFormSigningSecretRequest') },
        responses: { '200': { description: 'The signing secret for that mode.', content: ref('AdminFormSigningSecret') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/page-policy`]: {
      get: op('adminPagePolicy', 'The headers and tessera.js line the merchant’s payment page should send (SAQ A kit)', readSession, {
        parameters: [...merchantPath, ...queryParameters(pagePolicyQuerySchema)],
        responses: { '200': { description: 'The recommended policy.', content: ref('AdminPagePolicy') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/page-inventory`]: {
      get: op(
        'adminPageInventory',
        'The scripts the merchant’s payment pages ran, flagged when new, changed or under a weaker policy',
        readSession,
        {
          parameters: [...merchantPath, ...queryParameters(pageInventoryQuerySchema)],
          responses: {
            '200': { description: 'Pages with scripts, latest events and CSP violations.', content: ref('AdminPageInventory') },
          },
        },
      ),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/page-inventory/export`]: {
      get: op(
        'adminPageInventoryExport',
        'The inventory as evidence (PCI DSS 6.4.3, 11.6.1): JSON or CSV download (audited)',
        readSession,
        {
          parameters: [...merchantPath, ...queryParameters(pageInventoryExportQuerySchema)],
          responses: {
            '200': {
              description: 'An attachment: JSON, or CSV with one row per script.',
              content: { ...ref('AdminPageInventoryExport'), 'text/csv': { schema: { type: 'string' } } },
            },
          },
        },
      ),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/page-inventory/authorizations`]: {
      post: op('adminAuthorizePageScript', 'Authorize a script as it is now, with a justification (audited)', session, {
        parameters: merchantPath,
        requestBody: { required: true, content: ref('AdminScriptAuthorization') },
        responses: {
          '200': { description: 'The page, as in AdminPageInventory.', content: { 'application/json': { schema: { type: 'object' } } } },
        },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/page-inventory/policy-acceptances`]: {
      post: op(
        'adminAcceptPagePolicy',
        'Accept the page’s current Content-Security-Policy as its baseline, with a justification (audited)',
        session,
        {
          parameters: merchantPath,
          requestBody: { required: true, content: ref('AdminPolicyAcceptance') },
          responses: {
            '200': { description: 'The page, as in AdminPageInventory.', content: { 'application/json': { schema: { type: 'object' } } } },
          },
        },
      ),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/webhook-endpoints`]: {
      get: op('adminListWebhookEndpoints', 'The merchant’s webhook endpoints of one mode (never their secrets)', readSession, {
        parameters: [...merchantPath, ...webhookMode],
        responses: { '200': { description: 'Endpoints, oldest first.', content: ref('AdminWebhookEndpointList') } },
      }),
      post: op('adminCreateWebhookEndpoint', 'Create a webhook endpoint (its signing secret is shown once; audited)', session, {
        parameters: [...merchantPath, ...webhookMode],
        requestBody: { required: true, content: ref('AdminWebhookEndpointCreate') },
        responses: { '201': { description: 'The endpoint and its secret.', content: ref('AdminWebhookEndpointWithSecret') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/webhook-endpoints/{endpointId}`]: {
      delete: op('adminDeleteWebhookEndpoint', 'Delete a webhook endpoint (audited)', session, {
        parameters: [...merchantPath, endpointId, ...webhookMode],
        responses: { '204': { description: 'Deleted.' } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/webhook-endpoints/{endpointId}/rotate-secret`]: {
      post: op(
        'adminRotateWebhookSecret',
        'A new signing secret (shown once); the old one signs beside it for a while (audited)',
        session,
        {
          parameters: [...merchantPath, endpointId, ...webhookMode],
          requestBody: { required: false, content: ref('AdminWebhookSecretRotate') },
          responses: { '200': { description: 'The endpoint and its new secret.', content: ref('AdminWebhookEndpointWithSecret') } },
        },
      ),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/webhook-endpoints/{endpointId}/enable`]: {
      post: op('adminEnableWebhookEndpoint', 'Enable a disabled webhook endpoint again (audited)', session, {
        parameters: [...merchantPath, endpointId, ...webhookMode],
        responses: { '200': { description: 'The endpoint.', content: ref('AdminWebhookEndpoint') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/webhook-endpoints/{endpointId}/deliveries`]: {
      get: op('adminListWebhookDeliveries', 'Recent delivery attempts to one endpoint, newest first', readSession, {
        parameters: [...merchantPath, endpointId, ...queryParameters(webhookDeliveriesQuerySchema)],
        responses: { '200': { description: 'The attempts.', content: ref('AdminWebhookDeliveries') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/webhook-endpoints/{endpointId}/deliveries/{eventId}/resend`]: {
      post: op('adminResendWebhookEvent', 'Send one event to the endpoint again (audited)', session, {
        parameters: [
          ...merchantPath,
          endpointId,
          { name: 'eventId', in: 'path', required: true, schema: { type: 'string' } },
          ...webhookMode,
        ],
        responses: { '202': { description: 'Queued for delivery.', content: ref('AdminWebhookResend') } },
      }),
    },
    [`${ADMIN_BASE}/requests`]: {
      get: op('adminListRequests', 'The merchant’s request log: every /v1 request, newest first, filtered', readSession, {
        parameters: queryParameters(listRequestsQuerySchema()),
        responses: { '200': { description: 'A page of entries (without the PSP body template).', content: ref('AdminRequestList') } },
      }),
    },
    [`${ADMIN_BASE}/requests/stats`]: {
      get: op('adminRequestStats', 'Requests per minute, error rate and PSP p50/p99 over the last hours', readSession, {
        parameters: queryParameters(requestStatsQuerySchema()),
        responses: { '200': { description: 'One point per minute, and totals.', content: ref('AdminRequestStats') } },
      }),
    },
    [`${ADMIN_BASE}/requests/{id}`]: {
      get: op('adminGetRequest', 'One request log entry in full (PSP body template and header names included)', readSession, {
        parameters: [id, ...queryParameters(requestDetailQuerySchema())],
        responses: { '200': { description: 'The entry.', content: ref('AdminRequest') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/shred-requests`]: {
      post: op(
        'adminRequestShred',
        'Ask for a merchant (or one mode) to be crypto-shredded; another platform operator with a second factor must approve',
        session,
        {
          parameters: merchantPath,
          requestBody: { required: true, content: ref('AdminShredRequest') },
          responses: { '201': { description: 'The order, pending.', content: ref('AdminShredOrder') } },
        },
      ),
    },
    [`${ADMIN_BASE}/shred-orders`]: {
      get: op('adminListShredOrders', 'Crypto-shredding orders (platform operators)', readSession, {
        responses: { '200': { description: 'Orders, newest first.', content: ref('AdminShredOrders') } },
      }),
    },
    [`${ADMIN_BASE}/shred-orders/{orderId}`]: {
      get: op('adminGetShredOrder', 'One crypto-shredding order and its progress', readSession, {
        parameters: shredOrderPath,
        responses: { '200': { description: 'The order.', content: ref('AdminShredOrder') } },
      }),
    },
    [`${ADMIN_BASE}/shred-orders/{orderId}/approve`]: {
      post: op(
        'adminApproveShred',
        'Approve a pending order (not its requester): the vault destroys the merchant keys, then sweeps the records',
        session,
        {
          parameters: shredOrderPath,
          responses: { '200': { description: 'The order, approved.', content: ref('AdminShredOrder') } },
        },
      ),
    },
    [`${ADMIN_BASE}/shred-orders/{orderId}/cancel`]: {
      post: op('adminCancelShred', 'Cancel a pending order', session, {
        parameters: shredOrderPath,
        responses: { '200': { description: 'The order, cancelled.', content: ref('AdminShredOrder') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/export-recipients`]: {
      get: op('adminListExportRecipients', "The recipients' public keys registered for a merchant's card exports", readSession, {
        parameters: merchantPath,
        responses: { '200': { description: 'Oldest first.', content: ref('AdminExportRecipients') } },
      }),
      post: op('adminRegisterExportRecipient', 'Register a recipient public key for card exports (its fingerprint is answered)', session, {
        parameters: merchantPath,
        requestBody: { required: true, content: ref('AdminExportRecipientRegistration') },
        responses: { '201': { description: 'The recipient.', content: ref('AdminExportRecipient') } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/export-recipients/{fingerprint}`]: {
      delete: op('adminRemoveExportRecipient', 'Remove a recipient: no export goes to it any more', session, {
        parameters: recipientPath,
        responses: { '204': { description: 'Removed.' } },
      }),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/export-requests`]: {
      post: op(
        'adminRequestExport',
        "Ask for a merchant's cards (all, or listed tokens) to be exported to a registered recipient; another platform operator with a second factor must approve",
        session,
        {
          parameters: merchantPath,
          requestBody: { required: true, content: ref('AdminExportRequest') },
          responses: { '201': { description: 'The order, pending.', content: ref('AdminExportOrder') } },
        },
      ),
    },
    [`${ADMIN_BASE}/export-orders`]: {
      get: op('adminListExportOrders', 'Card export orders (platform operators)', readSession, {
        responses: { '200': { description: 'Orders, newest first.', content: ref('AdminExportOrders') } },
      }),
    },
    [`${ADMIN_BASE}/export-orders/{orderId}`]: {
      get: op('adminGetExportOrder', 'One card export order and its progress', readSession, {
        parameters: exportOrderPath,
        responses: { '200': { description: 'The order.', content: ref('AdminExportOrder') } },
      }),
    },
    [`${ADMIN_BASE}/export-orders/{orderId}/approve`]: {
      post: op('adminApproveExport', 'Approve a pending export (not its requester): the vault writes the encrypted file', session, {
        parameters: exportOrderPath,
        responses: { '200': { description: 'The order, approved.', content: ref('AdminExportOrder') } },
      }),
    },
    [`${ADMIN_BASE}/export-orders/{orderId}/cancel`]: {
      post: op('adminCancelExport', 'Cancel a pending export', session, {
        parameters: exportOrderPath,
        responses: { '200': { description: 'The order, cancelled.', content: ref('AdminExportOrder') } },
      }),
    },
    [`${ADMIN_BASE}/export-orders/{orderId}/file`]: {
      get: op(
        'adminDownloadExport',
        "A done export's file: OpenPGP ciphertext to the recipient's key, never clear card data",
        readSession,
        {
          parameters: exportOrderPath,
          responses: {
            '200': {
              description: 'The encrypted file.',
              content: { 'application/pgp-encrypted': { schema: { type: 'string', contentMediaType: 'application/pgp-encrypted' } } },
            },
          },
        },
      ),
    },
    [`${ADMIN_BASE}/merchants/{merchantId}/imports`]: {
      post: op(
        'adminRequestCardImport',
        "Start a card import (operator with a second factor): a vault makes the import's key pair; poll GET /imports/{importId} for its publicKey",
        session,
        {
          parameters: merchantPath,
          requestBody: { required: true, content: ref('AdminCardImportRequest') },
          responses: { '202': { description: 'The import, creating.', content: ref('AdminCardImport') } },
        },
      ),
    },
    [`${ADMIN_BASE}/imports/{importId}`]: {
      get: op('adminGetCardImport', 'A card import: status, counts, and its public key once made', readSession, {
        parameters: importPath,
        responses: { '200': { description: 'The import.', content: ref('AdminCardImport') } },
      }),
    },
    [`${ADMIN_BASE}/imports/{importId}/file`]: {
      put: op(
        'adminUploadCardImport',
        'Upload the encrypted file (streamed in 1 MiB chunks; at most IMPORT_UPLOAD_MAX_BYTES, else 413); the import is queued for a vault',
        session,
        {
          parameters: importPath,
          requestBody: {
            required: true,
            content: {
              'application/pgp-encrypted': { schema: { type: 'string', format: 'binary' } },
              'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
            },
          },
          responses: { '202': { description: 'The import, queued.', content: ref('AdminCardImport') } },
        },
      ),
    },
    [`${ADMIN_BASE}/imports/{importId}/report`]: {
      get: op('adminCardImportReport', "The report of a done import: OpenPGP ciphertext to the merchant's key (409 before)", readSession, {
        parameters: importPath,
        responses: {
          '200': {
            description: 'line,old_id,outcome,token,reason rows, encrypted to reportRecipientKey.',
            content: { 'application/pgp-encrypted': { schema: { type: 'string', format: 'binary' } } },
          },
        },
      }),
    },
    [`${ADMIN_BASE}/detokenizations`]: {
      get: op(
        'adminDetokenizations',
        'Every /v1/proxy call that rendered card data: merchant, key id, token, PSP host, status, time',
        readSession,
        {
          parameters: auditQuery,
          responses: { '200': { description: 'Entries, newest first.', content: ref('AdminDetokenizations') } },
        },
      ),
    },
  };
}

/**
 * The admin service's OpenAPI 3.1 document (GET /admin/v1/openapi.json): the admin API, this
 * document and the probes. Public like the gateway's /v1 document: it holds no secrets.
 */
export function buildAdminOpenApiDocument(): JsonObject {
  const plain = (description: string, schema: JsonObject) => ({ description, content: { 'application/json': { schema } } });
  const probe = plain('Status.', { type: 'object', properties: { status: { type: 'string' } } });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tessera admin API',
      version: '1.0.0',
      description:
        'The operators’ dashboard API of the admin service (its own listener, ADMIN_BIND:ADMIN_PORT): API keys, merchants, ' +
        'return URLs, the request log and the audit trail. It uses a dashboard session cookie and a CSRF header, never an ' +
        'API key. Errors made by Tessera carry the header x-tessera-error.',
    },
    servers: [{ url: '/', description: 'This admin service (paths include /admin/v1).' }],
    paths: {
      ...adminOpenApiPaths(),
      [`${ADMIN_BASE}/openapi.json`]: {
        get: {
          operationId: 'getAdminOpenApiDocument',
          summary: 'This document',
          tags: ['admin'],
          security: [],
          responses: { '200': plain('OpenAPI 3.1 document.', { type: 'object' }) },
        },
      },
      '/healthz': { get: { operationId: 'health', summary: 'Liveness', security: [], responses: { '200': probe } } },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary: 'Readiness: Redis answers',
          security: [],
          responses: { '200': probe, '503': plain('Redis does not answer.', { type: 'object' }) },
        },
      },
    },
    components: {
      securitySchemes: ADMIN_SECURITY_SCHEMES,
      schemas: { ...adminOpenApiSchemas(), Error: jsonSchema(errorEnvelopeSchema) },
    },
  };
}
