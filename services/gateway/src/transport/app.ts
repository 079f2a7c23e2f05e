import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { TesseraError, type Logger, parseCidrList, withDeadline } from '@tessera/common';
import type { ApiKeyStore, DetokenizationLog, MerchantSettingsStore } from '@tessera/merchant-data';
import type { KeyLookupWithPeek } from '@tessera/edge';
import type { RateLimiter } from '@tessera/edge';
import { idempotency } from './idempotency';
import { httpMetrics } from '@tessera/edge';
import type { Registry } from 'prom-client';
import type { IdempotencyStore } from '../store/idempotencyStore';
import { installSecurityHeaders } from '@tessera/edge';
import { createAuthMiddleware } from '@tessera/edge';
import { sendJson } from '@tessera/edge';
import { jsonObjectBody, optionalJsonObjectBody } from '@tessera/edge';
import { errorHandler, routeNotFound } from '@tessera/edge';
import { chooseRequestId, contextOf, routeOf, setContext, type RequestContext } from '@tessera/edge';
import { proxyRoutes, proxyTimingHeaders, tokenRoutes } from './routes';
import { buildOpenApiDocument } from './openapi';
import type { EventReader, EventRecorder, ForwardProxyVault, ProxyApi, VaultApi, WebhookEndpoints } from '../app/ports';
import { forwardProxyCaRoute } from './forwardProxyCa';
import { eventRecording, recordNoEvent } from '../app/events';
import { eventRoutes } from './events';
import { webhookEndpointRoutes } from './webhookEndpoints';
import { Counter } from 'prom-client';
import type { Readiness } from '@tessera/protos';
import type { FormSessionDeps } from '../app/formSessions';
import type { CvcSessionDeps } from '../app/cvcSessions';
import { cvcSessionRoutes } from './cvcSessions';
import { formSessionRoutes } from './formSessions';
import type { RequestLogRecorder } from '../app/requestLog';
import { requestFactsOf } from './requestLogging';

export interface GatewayDeps {
  config: {
    BODY_LIMIT_BYTES: number;
    READY_TIMEOUT_MS: number;
    TRUSTED_PROXIES: readonly string[];
    /** Strict-Transport-Security max-age; 0 or absent: not sent. */
    HSTS_MAX_AGE_SECONDS?: number;
  };
  logger: Logger;
  keyStore: ApiKeyStore;
  /** The resolved API_KEY_PEPPER, or the newest of API_KEY_PEPPERS (see resolveApiKeyPepper). */
  pepper: string;
  /** The older peppers of API_KEY_PEPPERS, newest first: keys hashed under them still authenticate. */
  previousPeppers?: readonly string[];
  vault: VaultApi;
  proxy: ProxyApi;
  now?: () => Date;
  /** API rate limits (per key, failed authentication per IP); absent: none. */
  rateLimiter?: RateLimiter;
  /**
   * Set when keyStore also holds rateLimiter's counters and the merchant settings (one Redis): each
   * request's key lookup then reads and counts them in the same command (see app/authenticate.ts).
   */
  keyLookupWithPeek?: KeyLookupWithPeek;
  /** Idempotency-Key answers and their limits. */
  idempotency: { store: IdempotencyStore; ttlMs: number; lockTtlMs: number; maxStoredBytes: number; maxBytesPerMerchant: number };
  /** Prometheus registry for request counts and latencies (served on METRICS_PORT by main). */
  metrics?: Registry;
  /** Where every detokenizing /v1/proxy call is recorded (admin API: /admin/v1/detokenizations). */
  detokenizations?: DetokenizationLog;
  /** Where every /v1 request of a merchant is recorded (admin API: /admin/v1/requests); absent: not recorded. */
  requestLog?: RequestLogRecorder;
  /** Per-merchant settings (the PSP host allowlist passed to the proxy); absent: no allowlists. */
  merchantSettings?: MerchantSettingsStore;
  /** Further /readyz checks by name, read at each probe (e.g. the development API key is registered). */
  readyChecks?: Record<string, () => boolean>;
  /**
   * CVC sessions, the grants tessera.cvcField needs on the fields service; absent: no
   * /v1/token/{token}/cvc-sessions.
   */
  cvcSessions?: Omit<CvcSessionDeps, 'vault'>;
  /** The hosted payment page's sessions (needs FIELDS_ORIGIN); absent: no /v1/form-sessions. */
  formSessions?: FormSessionDeps;
  /** The merchant's events: recorded by the token routes, read by /v1/events; absent: neither. */
  events?: EventReader & EventRecorder;
  /** The merchant's webhook endpoints (secrets derived from `pepper`); absent: no /v1/webhook-endpoints. */
  webhookEndpoints?: WebhookEndpoints;
  /** The vault's forward-proxy CA (GET /v1/forward-proxy/ca.pem); absent: not served. */
  forwardProxyVault?: Pick<ForwardProxyVault, 'caCertificatePem'>;
}

type CheckResult = 'ok' | 'unavailable';

/** The request's context plus whether its access line went out ('finish' and 'close' both try). */
interface AccessContext extends RequestContext {
  logged: boolean;
}

/** Every field the access line may have: none of them is request data. */
interface AccessLine {
  method: string;
  route: string | null;
  status: number;
  ms: number;
  requestId: string;
  merchantId: string | null;
  keyId: string | null;
  aborted?: true;
}

const upstreamTimeout = (): TesseraError => new TesseraError('upstream_timeout');

export function createApp(deps: GatewayDeps): Express {
  const { logger, keyStore, vault, proxy } = deps;
  const now = deps.now ?? (() => new Date());
  const app = express();
  // Express must add nothing of its own, above all not to a PSP response passed through.
  app.disable('x-powered-by');
  app.disable('etag');
  installSecurityHeaders(app, { hstsMaxAgeSeconds: deps.config.HSTS_MAX_AGE_SECONDS ?? 0 });

  const recordMetrics = deps.metrics ? httpMetrics(deps.metrics) : undefined;
  const logAccess = (res: Response): void => {
    const ctx = contextOf(res) as AccessContext;
    if (ctx.logged) return;
    ctx.logged = true;
    const ms = Number(process.hrtime.bigint() - ctx.startedAt) / 1e6;
    // Route pattern only: a raw path could carry a token or whatever a client typed.
    const line: AccessLine = {
      method: res.req.method,
      route: routeOf(res.req) ?? null,
      status: res.statusCode,
      ms: Math.round(ms * 10) / 10,
      requestId: ctx.requestId,
      merchantId: ctx.apiKey?.merchantId ?? null,
      keyId: ctx.apiKey?.id ?? null,
    };
    if (!res.writableFinished) line.aborted = true;
    logger.info(line, 'request');
    const facts = deps.requestLog ? requestFactsOf(res, ctx, ms) : undefined;
    if (facts) deps.requestLog?.record(facts);
  };
  // Shared listeners (`this` is the response), not closures made for every request.
  function onFinish(this: Response): void {
    logAccess(this);
    if (recordMetrics) recordMetrics(this.req, this, contextOf(this).startedAt);
  }
  function onClose(this: Response): void {
    logAccess(this);
  }

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = chooseRequestId(req.headers['x-request-id']);
    const ctx: AccessContext = { requestId, startedAt: process.hrtime.bigint(), logged: false };
    setContext(res, ctx);
    res.setHeader('x-request-id', requestId);
    res.on('finish', onFinish);
    res.on('close', onClose);
    next();
  });

  const authDeps = {
    keyStore,
    pepper: deps.pepper,
    previousPeppers: deps.previousPeppers ?? [],
    trustedProxies: parseCidrList(deps.config.TRUSTED_PROXIES),
    logger,
    now,
    ...(deps.rateLimiter ? { rateLimiter: deps.rateLimiter } : {}),
    ...(deps.keyLookupWithPeek ? { keyLookupWithPeek: deps.keyLookupWithPeek } : {}),
  };
  const auth = createAuthMiddleware(authDeps);
  const body = jsonObjectBody(deps.config.BODY_LIMIT_BYTES);
  const optionalBody = optionalJsonObjectBody(deps.config.BODY_LIMIT_BYTES);
  const recordFailures = deps.metrics
    ? new Counter({
        name: 'tessera_events_record_failures_total',
        help: 'Events not recorded (the request they report had already succeeded), by event type',
        labelNames: ['type'],
        registers: [deps.metrics],
      })
    : undefined;
  const recordEvent = deps.events
    ? eventRecording({ recorder: deps.events, logger, now, countFailure: (type) => recordFailures?.inc({ type }) })
    : recordNoEvent;
  const tokens = tokenRoutes(vault, recordEvent);
  const proxying = proxyRoutes({ proxy, logger, detokenizations: deps.detokenizations, merchantSettings: deps.merchantSettings });
  // The PSP host allowlist is read in the key lookup's round trip (see AuthDeps.merchantSettings).
  const proxyAuth = createAuthMiddleware({ ...authDeps, merchantSettings: proxying.takeMerchantSettings });
  const idempotencyOptions = {
    ...deps.idempotency,
    pepper: deps.pepper,
    logger,
  };
  // A tokenization interrupted by a gateway crash may simply run again; a PSP call may not.
  const idempotent = idempotency({ ...idempotencyOptions, whenAbandoned: 'run_again' });
  const idempotentPspCall = idempotency({ ...idempotencyOptions, whenAbandoned: 'outcome_unknown' });

  // The API routes come first: the router tests a request against every layer before its own,
  // and no path below overlaps theirs.
  app.post('/v1/token', auth, ...body, idempotent, tokens.create);
  app.get('/v1/token/:token', auth, tokens.get);
  app.delete('/v1/token/:token', auth, tokens.remove);
  app.patch('/v1/token/:token', auth, ...body, tokens.update);
  // A retry must not attach a second CVV after the first was used: Idempotency-Key replays the answer.
  app.post('/v1/token/:token/cvc', auth, ...body, idempotent, tokens.recollectCvv);
  // Idempotent by nature (a retained token stays retained), so no Idempotency-Key handling.
  app.post('/v1/token/:token/retain', auth, ...optionalBody, tokens.retain);
  app.post('/v1/proxy', proxyTimingHeaders, proxyAuth, ...body, idempotentPspCall, proxying.forward);
  app.post('/v1/proxy/dry-run', proxyTimingHeaders, proxyAuth, ...body, proxying.dryRun);
  if (deps.cvcSessions) {
    const cvc = cvcSessionRoutes({ ...deps.cvcSessions, vault });
    // A secret key opens the grant; the CVC-only field uses it on the fields service.
    app.post('/v1/token/:token/cvc-sessions', auth, ...optionalBody, cvc.open);
  }

  if (deps.formSessions) {
    const forms = formSessionRoutes(deps.formSessions);
    // A retried create with the same Idempotency-Key answers the first session, not a second page.
    app.post('/v1/form-sessions', auth, ...body, idempotent, forms.create);
    app.get('/v1/form-sessions', auth, forms.list);
    app.get('/v1/form-sessions/:id', auth, forms.get);
  }

  if (deps.webhookEndpoints) {
    const endpoints = webhookEndpointRoutes({ endpoints: deps.webhookEndpoints, pepper: deps.pepper, now });
    // A retried create with the same Idempotency-Key answers the first endpoint, not a second one.
    app.post('/v1/webhook-endpoints', auth, ...body, idempotent, endpoints.create);
    app.get('/v1/webhook-endpoints', auth, endpoints.list);
    app.get('/v1/webhook-endpoints/:id', auth, endpoints.get);
    app.delete('/v1/webhook-endpoints/:id', auth, endpoints.remove);
    app.post('/v1/webhook-endpoints/:id/rotate-secret', auth, ...optionalBody, endpoints.rotateSecret);
  }

  if (deps.forwardProxyVault) {
    app.get('/v1/forward-proxy/ca.pem', auth, forwardProxyCaRoute(deps.forwardProxyVault));
  }

  if (deps.events) {
    const events = eventRoutes({ events: deps.events });
    app.get('/v1/events', auth, events.list);
    app.get('/v1/events/:id', auth, events.get);
  }

  app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));

  // Public on purpose: no secrets in it, and tools fetch it before anyone has a key.
  const openApiDocument = buildOpenApiDocument();
  app.get('/v1/openapi.json', (_req, res) => sendJson(res, 200, openApiDocument));

  app.get('/readyz', async (_req, res) => {
    const requestId = contextOf(res).requestId;
    const timeoutMs = deps.config.READY_TIMEOUT_MS;
    // The gRPC calls carry their own deadline; the extra timer also bounds anything that ignores it.
    const upstream = async (check: Promise<Readiness>): Promise<CheckResult> =>
      (await withDeadline(check, timeoutMs, upstreamTimeout)).ready ? 'ok' : 'unavailable';
    const settled = await Promise.allSettled([
      upstream(vault.ready({ requestId, timeoutMs })),
      upstream(proxy.ready({ requestId, timeoutMs })),
      withDeadline(keyStore.ping(), timeoutMs, upstreamTimeout).then((): CheckResult => 'ok'),
    ]);
    const [vaultCheck, proxyCheck, storeCheck] = settled.map((s): CheckResult => (s.status === 'fulfilled' ? s.value : 'unavailable'));
    const checks: Record<string, CheckResult | undefined> = { vault: vaultCheck, proxy: proxyCheck, keyStore: storeCheck };
    for (const [name, isReady] of Object.entries(deps.readyChecks ?? {})) checks[name] = isReady() ? 'ok' : 'unavailable';
    const ready = Object.values(checks).every((c) => c === 'ok');
    if (!ready) logger.warn({ requestId, checks }, 'not ready');
    sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks });
  });

  app.use(routeNotFound);
  app.use(errorHandler(logger));

  return app;
}
