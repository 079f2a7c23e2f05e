import type { AdminEventDeps } from '../app/apiKeyEvents';
import {
  type ApiKeyAdmin,
  type ApiKeyLookup,
  type AuditLog,
  type DetokenizationLog,
  type MerchantSettingsStore,
  type WebhookEndpointStore,
} from '@tessera/merchant-data';
import path from 'node:path';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { TesseraError, withDeadline, type Cidr, type Logger } from '@tessera/common';
import { createAdminSessions, type AdminSessionDeps } from '../app/adminSessions';
import { resolveClientIp } from '@tessera/edge';
import { sendError, sendJson } from '@tessera/edge';
import { errorHandler, routeNotFound } from '@tessera/edge';
import { jsonObjectBody, optionalJsonObjectBody } from '@tessera/edge';
import { chooseRequestId, contextOf, routeOf, setContext } from '@tessera/edge';
import { installSecurityHeaders } from '@tessera/edge';
import { registerAuditRoutes } from './auditRoutes';
import { registerKeyRoutes, type AttackStateLookup } from './keyRoutes';
import { registerMerchantRoutes } from './merchantRoutes';
import { registerReturnUrlRoutes } from './returnUrlRoutes';
import { registerProxyRouteRoutes, registerRouteFileRoutes, routeFileBody } from './proxyRouteRoutes';
import type { RouteStore } from '@tessera/routes';
import { adminOf, registerSessionRoutes, registerSignInRoute, requireSession } from './sessionRoutes';
import { registerRequestRoutes } from './requestRoutes';
import { registerWebhookRoutes } from './webhookRoutes';
import { registerShredRoutes } from './shredRoutes';
import { registerExportRoutes } from './exportRoutes';
import type { CardExportDeps } from '../app/cardExports';
import { registerImportRoutes } from './importRoutes';
import type { CardImportDeps } from '../app/cardImports';
import type { RedisShredOrderStore } from '@tessera/merchant-data';
import type { WebhookDeliveriesPort } from '../app/webhookDeliveriesPort';
import { registerPageInventoryRoutes } from './pageInventoryRoutes';
import type { PageInventoryDeps, PagePolicyDeps } from '../app/pageInventory';
import { buildAdminOpenApiDocument } from './openapi';
import type { RequestLogDeps } from '../app/requestLog';

export const ADMIN_BASE = '/admin/v1';
const ADMIN_BODY_LIMIT = 32 * 1024;
/** Relative to dist/transport and src/transport alike. */
export const DASHBOARD_DIR = path.resolve(__dirname, '../../public/dashboard');

/** The sign-in use cases' stores and peppers (app/adminSessions.ts), and what the other resources need. */
export interface AdminDeps extends Omit<AdminSessionDeps, 'audit' | 'config' | 'mfaRequired' | 'now'> {
  // The key use cases: administration, and the lookup of "test this key".
  keyStore: ApiKeyAdmin & ApiKeyLookup;
  audit: AuditLog;
  /** The detokenization audit (every /v1/proxy that renders card data); absent: route answers 404. */
  detokenizations?: DetokenizationLog;
  /** Per-merchant settings (PSP host allowlist); absent: the psp-hosts routes answer 404. */
  merchantSettings?: MerchantSettingsStore;
  /** The merchants' proxy routes (docs/routes.md); absent: those routes answer 404. */
  routes?: RouteStore;
  /** The merchants' request logs (requestRoutes.ts); absent: those routes answer 404. */
  requestLog?: RequestLogDeps;
  /** The payment pages' script inventory and the operators' authorizations (SAQ A kit); absent: those routes answer 404. */
  pageInventory?: Pick<PageInventoryDeps, 'inventory' | 'authorizations'>;
  /** What the recommended payment-page policy names: FIELDS_ORIGIN and tessera.js's SRI hash. */
  pagePolicy?: PagePolicyDeps;
  /** Merchants' webhook endpoints; absent: the webhook routes answer 404. */
  webhookEndpoints?: WebhookEndpointStore;
  /** Their delivery attempts and resends; absent: the deliveries and resend routes answer 404. */
  webhookDeliveries?: WebhookDeliveriesPort;
  /** Whether a key is under card-testing attack, for the key list's banner; absent: never shown. */
  attackState?: AttackStateLookup;
  /** Crypto-shredding orders (two operators; the vault carries them out); absent: those routes answer 404. */
  shredOrders?: Pick<RedisShredOrderStore, 'create' | 'get' | 'list' | 'replace'>;
  /** Card exports: orders, registered recipients, encrypted files (the vault writes them); absent: those routes answer 404. */
  cardExports?: Omit<CardExportDeps, 'audit' | 'now'>;
  /** Card imports (a vault makes the key and runs them); absent: those routes answer 404. */
  cardImports?: Pick<CardImportDeps, 'imports' | 'maxUploadBytes'>;
  /** Where the key use cases record api_key.created and .revoked; absent: no events. */
  events?: AdminEventDeps;
  trustedProxies: readonly Cidr[];
  logger: Logger;
  /** The session and sign-in limits, and HSTS for the admin listener. */
  config: AdminSessionDeps['config'] & { HSTS_MAX_AGE_SECONDS?: number };
  /** Whether every operator needs a second factor (first sign-in enrols); resolved by setUpAdmin. */
  mfaRequired?: boolean;
  now?: () => Date;
}

/** The dashboard page: only its own scripts and styles, never framed, no referrer leaks. */
const DASHBOARD_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-cache',
};

/** True when the Origin header names this very host: anything else is a cross-site request. */
function sameOrigin(req: Request): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/**
 * The admin API (`/admin/v1`) and the dashboard page (`/dashboard`). Self-contained: it sets up
 * the request context when nobody did and answers its own errors with the edge's handlers.
 *
 * A request crosses: the request context and client address, the same-origin check, the JSON
 * body parser, then either sign-in or the session check (sessionRoutes.ts), then one resource's
 * routes (sessions, keys, merchants and PSP hosts, return URLs, audit), which parse with the
 * use cases' zod schemas (validation.ts), call app/, and answer.
 */
export function createAdminRouter(deps: AdminDeps): Router {
  const { logger } = deps;
  const now = deps.now ?? (() => new Date());
  const router = express.Router();

  const ensureContext: RequestHandler = (req, res, next) => {
    try {
      contextOf(res);
    } catch {
      const requestId = chooseRequestId(req.headers['x-request-id']);
      setContext(res, { requestId, startedAt: process.hrtime.bigint() });
      res.setHeader('x-request-id', requestId);
      res.on('finish', () => {
        const ms = Number(process.hrtime.bigint() - contextOf(res).startedAt) / 1e6;
        logger.info(
          { method: req.method, route: routeOf(req) ?? null, status: res.statusCode, ms: Math.round(ms * 10) / 10, requestId },
          'request',
        );
      });
    }
    contextOf(res).clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);
    next();
  };

  // Relative asset URLs in the page need the trailing slash; Express routing ignores it, so check.
  router.get('/dashboard', (req, res, next) => {
    if (req.path.endsWith('/')) return next();
    res.setHeader('cache-control', 'no-store');
    res.redirect(301, '/dashboard/');
  });
  router.use(
    '/dashboard',
    express.static(DASHBOARD_DIR, {
      index: 'index.html',
      redirect: false,
      dotfiles: 'ignore',
      setHeaders: (res) => {
        for (const [name, value] of Object.entries(DASHBOARD_HEADERS)) res.setHeader(name, value);
      },
    }),
  );

  // Public, as the gateway's /v1 document: no secrets in it, and tools fetch it before anyone signs in.
  let openApiDocument: unknown;
  router.get(`${ADMIN_BASE}/openapi.json`, (_req, res) => sendJson(res, 200, (openApiDocument ??= buildAdminOpenApiDocument())));

  const api = express.Router();
  router.use(ADMIN_BASE, ensureContext, api);
  const body = jsonObjectBody(ADMIN_BODY_LIMIT);

  // Browsers always send Origin on cross-site POSTs; SameSite=Strict and the CSRF token already
  // stop those, this refuses them before any work is done.
  api.use((req, _res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && !sameOrigin(req)) {
      throw new TesseraError('csrf_token_invalid', { message: 'Cross-origin requests to the admin API are refused.' });
    }
    next();
  });

  const sessions = createAdminSessions({
    operators: deps.operators,
    sessions: deps.sessions,
    throttle: deps.throttle,
    audit: deps.audit,
    pepper: deps.pepper,
    ...(deps.previousPeppers ? { previousPeppers: deps.previousPeppers } : {}),
    config: deps.config,
    mfaRequired: deps.mfaRequired ?? false,
    now,
  });
  registerSignInRoute(api, sessions, body);
  api.use(requireSession(sessions));
  registerSessionRoutes(api, sessions, body);

  const merchantSettings = deps.merchantSettings;
  const settingsDeps = merchantSettings === undefined ? undefined : { merchantSettings, audit: deps.audit, pepper: deps.pepper, now };
  registerKeyRoutes(
    api,
    {
      keyStore: deps.keyStore,
      audit: deps.audit,
      pepper: deps.pepper,
      previousPeppers: deps.previousPeppers ?? [],
      now,
      ...(deps.events ? { events: deps.events } : {}),
    },
    body,
    deps.attackState,
  );
  registerMerchantRoutes(api, { keyStore: deps.keyStore, operators: deps.operators, pspHosts: settingsDeps }, body);
  // The hosted payment page's return URLs and signing secret.
  registerReturnUrlRoutes(
    api,
    () => {
      if (settingsDeps === undefined) throw new TesseraError('route_not_found');
      return settingsDeps;
    },
    body,
  );
  const routeDeps = deps.routes === undefined ? undefined : { routes: deps.routes, audit: deps.audit, now };
  registerProxyRouteRoutes(api, routeDeps, body);
  // Issue 28's `/admin/v1/routes`: the same use cases, a whole route file at a time.
  registerRouteFileRoutes(api, routeDeps === undefined ? undefined : { ...routeDeps, keyStore: deps.keyStore, operators: deps.operators }, {
    body,
    fileBody: routeFileBody(ADMIN_BODY_LIMIT),
  });
  registerAuditRoutes(api, { audit: deps.audit, detokenizations: deps.detokenizations });
  registerRequestRoutes(api, { deps: deps.requestLog, operatorOf: (res) => adminOf(res).operator });
  // The SAQ A kit: the payment page's recommended headers, its script inventory and authorizations.
  registerPageInventoryRoutes(
    api,
    {
      inventory: deps.pageInventory ? { ...deps.pageInventory, audit: deps.audit, now } : undefined,
      policy: deps.pagePolicy ?? { fieldsOrigin: undefined, tesseraJsIntegrity: undefined },
    },
    body,
  );

  // Webhook endpoints, their deliveries and resends (issue 27).
  registerWebhookRoutes(
    api,
    deps.webhookEndpoints === undefined
      ? undefined
      : {
          endpoints: deps.webhookEndpoints,
          audit: deps.audit,
          pepper: deps.pepper,
          now,
          ...(deps.webhookDeliveries ? { deliveries: deps.webhookDeliveries } : {}),
        },
    { body, optionalBody: optionalJsonObjectBody(ADMIN_BODY_LIMIT) },
  );

  registerShredRoutes(api, deps.shredOrders === undefined ? undefined : { orders: deps.shredOrders, audit: deps.audit, now }, body);
  registerExportRoutes(api, deps.cardExports === undefined ? undefined : { ...deps.cardExports, audit: deps.audit, now }, body);
  registerImportRoutes(api, deps.cardImports === undefined ? undefined : { ...deps.cardImports, audit: deps.audit, now }, body);

  api.use(routeNotFound);
  api.use(errorHandler(logger));
  return router;
}

/** What /readyz asks: the one store the admin service needs. */
export interface AdminHealth {
  /** Resolves when Redis answers. */
  ping(): Promise<void>;
  timeoutMs: number;
}

/**
 * The admin service's listener: the admin API and the dashboard, /healthz and /readyz (Redis
 * reachable), nothing else.
 */
export function createAdminApp(deps: AdminDeps, health?: AdminHealth): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  installSecurityHeaders(app, { hstsMaxAgeSeconds: deps.config.HSTS_MAX_AGE_SECONDS ?? 0 });
  app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
  if (health) {
    app.get('/readyz', async (_req, res) => {
      const redis = await withDeadline(health.ping(), health.timeoutMs, () => new TesseraError('upstream_timeout')).then(
        () => 'ok' as const,
        () => 'unavailable' as const,
      );
      if (redis !== 'ok') deps.logger.warn({ checks: { redis } }, 'not ready');
      sendJson(res, redis === 'ok' ? 200 : 503, { status: redis === 'ok' ? 'ready' : 'unavailable', checks: { redis } });
    });
  }
  app.use(createAdminRouter(deps));
  app.use((req: Request, res: Response) => {
    const requestId = chooseRequestId(req.headers['x-request-id']);
    sendError(res, new TesseraError('route_not_found'), requestId);
  });
  return app;
}
