import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import { TesseraError, type Cidr, type Logger } from '@tessera/common';
import { isLocale, LOCALES, type Locale } from '@tessera/js/locale';
import { DEFAULT_DISPLAY, FORM_SESSION_ID_PATTERN, hostedPageCsp } from '@tessera/merchant-data';
import {
  CHALLENGE_SOLUTION_FIELD,
  chooseRequestId,
  contextOf,
  errorHandler,
  httpMetrics,
  jsonObjectBody,
  resolveClientIp,
  routeOf,
  sendError,
  sendJson,
  SERVICE_SECURITY_HEADERS,
  setContext,
  setRetryAfter,
  type BrowserTokenLimiter,
  type RateLimitRefusal,
  type RateLimiter,
} from '@tessera/edge';
import {
  assertPayable,
  cancelFormSession,
  openFormSessionPage,
  shopLinkOf,
  submitCardForm,
  type HostedPageDeps,
  type SubmissionGuard,
} from '../app/hostedPage';
import type { FieldsVault } from '../app/ports';
import { cardFieldsCsp, fieldsRefusalOf, refusalCsp, type FieldsRefusal } from '../domain/browserFields';
import {
  BROWSER_CHALLENGE_PATH,
  BROWSER_CVC_PATH,
  BROWSER_TOKENS_PATH,
  browserAuth,
  browserChallenge,
  browserRoutes,
  type BrowserAuthDeps,
} from './browserRoutes';
import { REFUSAL_SCRIPT_HASH, renderCardFieldsPage, renderRefusalPage, type CardFieldsAssets } from './cardFieldsPage';
import { FONTS_PATH, loadFieldsFonts } from './fieldsFonts';
import { renderHostedNotice, renderHostedPage, type NoticeLink } from './hostedPage';
import { registerPageReportRoutes, type PageReportRouteDeps } from './pageReportRoutes';

/**
 * What the fields origin needs to know about the publishable key in an iframe URL: the origins
 * that may frame the fields. Undefined: not a usable publishable key (unknown, revoked, expired,
 * a secret key), and the page is refused.
 */
export type FrameKeyLookup = (presentedKey: string) => Promise<{ allowedOrigins: readonly string[] } | undefined>;

export interface FieldsAppDeps {
  assets: CardFieldsAssets;
  lookupKey: FrameKeyLookup;
  logger: Logger;
  hstsMaxAgeSeconds?: number;
  /** The hosted payment page (/pay/{id}); absent: not served. */
  formSessions?: HostedPageDeps;
  /**
   * The browser routes (/v1/browser/…), which the card fields and the CVC field call on this same
   * origin: their publishable-key authentication and the vault; absent: not served.
   */
  browser?: {
    auth: Omit<BrowserAuthDeps, 'browserLimiter' | 'provisionalTtlUnderAttackSeconds' | 'trustedProxies' | 'logger'> & {
      rateLimiter?: RateLimiter;
    };
    vault: Pick<FieldsVault, 'tokenize' | 'attachCvv'>;
  };
  /** The SAQ A kit's page reports and CSP violation reports (pageReportRoutes.ts); absent: not served. */
  pageReports?: PageReportRouteDeps;
  /** Request counts and latencies by route (served on METRICS_PORT by runService). */
  metrics?: Registry;
  /** /readyz: whether each dependency answers, by name. */
  readyChecks?: Record<string, () => Promise<boolean>>;
  /** The browser route's card-testing limits, applied to the hosted page's card too; absent: none. */
  cardTesting?: BrowserTokenLimiter;
  /** BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS: the life of a provisional token made while its key is under attack. */
  provisionalTtlUnderAttackSeconds?: number;
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the shopper, as on the API listener. */
  trustedProxies?: readonly Cidr[];
}

/** The status of each refusal page (its code is what the framing page hears). */
const REFUSAL_STATUS: Record<FieldsRefusal, number> = { api_key_invalid: 404, origin_not_allowed: 403, fields_unavailable: 503 };

/** Only something shaped like a publishable key is looked up; a secret key in a URL is refused unread. */
const PUBLISHABLE_KEY_SHAPE = /^tpk_(test|live)_[0-9A-Za-z]{38}$/;

/** Every response of the fields origin: never sniffed, no Referer (the URL holds the key). */
function baseHeaders(res: Response, hstsMaxAgeSeconds: number): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  if (hstsMaxAgeSeconds > 0) res.setHeader('strict-transport-security', `max-age=${hstsMaxAgeSeconds}`);
}

/**
 * The fields origin (FIELDS_ORIGIN): the card-fields iframe page, tessera.js, the hosted payment
 * page and the browser routes the iframe posts to. It holds no cookies and sends no CORS header
 * but tessera.js's: only its own pages can read what its routes answer.
 */
export function createFieldsApp(deps: FieldsAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const hsts = deps.hstsMaxAgeSeconds ?? 0;
  // One page per language (`locale` in the iframe URL, from tessera.js), so the fields read right from the first paint.
  const pages = Object.fromEntries(LOCALES.map((locale) => [locale, renderCardFieldsPage(deps.assets, locale)])) as Record<Locale, string>;
  const recordMetrics = deps.metrics ? httpMetrics(deps.metrics) : undefined;

  app.use((req: Request, res: Response, next: NextFunction) => {
    baseHeaders(res, hsts);
    const requestId = chooseRequestId(req.headers['x-request-id']);
    const startedAt = process.hrtime.bigint();
    setContext(res, { requestId, startedAt });
    res.setHeader('x-request-id', requestId);
    res.on('finish', () => {
      recordMetrics?.(req, res, startedAt);
      // Route pattern only: a raw path could carry a token, a session id or a key.
      const ctx = contextOf(res);
      deps.logger.info(
        {
          method: req.method,
          route: routeOf(req) ?? null,
          status: res.statusCode,
          ms: Math.round(Number(process.hrtime.bigint() - startedAt) / 1e5) / 10,
          requestId,
          merchantId: ctx.apiKey?.merchantId ?? null,
          keyId: ctx.apiKey?.id ?? null,
        },
        'request',
      );
    });
    next();
  });

  if (deps.pageReports) registerPageReportRoutes(app, deps.pageReports);
  if (deps.browser) registerBrowserRoutes(app, deps, deps.browser);

  /**
   * A refusal page in place of the fields: framable by any page (it holds no input), so the frame
   * shows why and tells tessera.js the code instead of failing as a broken frame.
   */
  const refuse = (res: Response, status: number, code: FieldsRefusal, message?: string): void => {
    res.status(status);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-security-policy', refusalCsp({ scriptHash: REFUSAL_SCRIPT_HASH, styleHash: deps.assets.styleHash }));
    res.setHeader('cross-origin-resource-policy', 'cross-origin');
    res.setHeader('cache-control', 'no-store');
    res.end(renderRefusalPage(code, message));
  };

  app.get('/fields/v1/card', async (req: Request, res: Response) => {
    const key = typeof req.query.key === 'string' ? req.query.key : '';
    // The page's origin as tessera.js claims it (frame-ancestors checks the truth): for a refusal with a reason.
    const claimedOrigin = typeof req.query.origin === 'string' ? req.query.origin : undefined;
    if (!PUBLISHABLE_KEY_SHAPE.test(key)) return refuse(res, 400, 'api_key_invalid', 'These card fields need a publishable key (tpk_…).');
    let found: { allowedOrigins: readonly string[] } | undefined;
    try {
      found = await deps.lookupKey(key);
    } catch (err) {
      deps.logger.error({ err, route: '/fields/v1/card' }, 'could not look up the publishable key of a card-fields page');
      return refuse(res, REFUSAL_STATUS.fields_unavailable, 'fields_unavailable');
    }
    const refusal = fieldsRefusalOf(found, claimedOrigin);
    if (refusal !== undefined || found === undefined) {
      // (No key is always a refusal: `found === undefined` only tells the compiler.)
      const code = refusal ?? 'api_key_invalid';
      return refuse(res, REFUSAL_STATUS[code], code);
    }
    res.status(200);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader(
      'content-security-policy',
      cardFieldsCsp({
        scriptHash: deps.assets.scriptHash,
        styleHash: deps.assets.fieldsStyleHash,
        allowedOrigins: found.allowedOrigins,
      }),
    );
    // So pages that require COEP (require-corp) can still embed the fields.
    res.setHeader('cross-origin-resource-policy', 'cross-origin');
    // Allowed origins and revocations change: every load asks again.
    res.setHeader('cache-control', 'no-store');
    res.end(pages[isLocale(req.query.locale) ? req.query.locale : 'en']);
  });

  if (deps.formSessions) registerHostedPage(app, deps, deps.formSessions);

  const fonts = loadFieldsFonts();
  /**
   * The fonts a merchant may pick for the fields (fieldsFonts.ts), for the fields page of this
   * origin only (CORP same-origin); versioned names, so cached for a year.
   */
  app.get(`${FONTS_PATH}/:file`, (req: Request, res: Response, next: NextFunction) => {
    const font = fonts.get(String(req.params.file));
    if (font === undefined) return next();
    res.status(200);
    res.setHeader('content-type', font.contentType);
    res.setHeader('cross-origin-resource-policy', 'same-origin');
    res.setHeader('cache-control', 'public, max-age=31536000, immutable');
    res.end(font.body);
  });

  app.get('/js/v1/tessera.js', (_req: Request, res: Response) => {
    res.status(200);
    res.setHeader('content-type', 'text/javascript; charset=utf-8');
    // Public, credential-free, and loaded by any merchant page with an SRI `integrity` (which
    // needs CORS for a cross-origin script): the one response of the fields origin with `*`.
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('cross-origin-resource-policy', 'cross-origin');
    res.setHeader('cache-control', 'public, max-age=300');
    res.end(deps.assets.tesseraJs);
  });

  app.get('/healthz', (_req: Request, res: Response) => {
    res.status(200).setHeader('content-type', 'application/json');
    res.end('{"status":"ok"}');
  });

  app.get('/readyz', async (_req: Request, res: Response) => {
    const entries = Object.entries(deps.readyChecks ?? {});
    const results = await Promise.all(entries.map(([, check]) => check().catch(() => false)));
    const checks = Object.fromEntries(entries.map(([name], i) => [name, results[i] ? 'ok' : 'unavailable']));
    const ready = results.every(Boolean);
    if (!ready) deps.logger.warn({ requestId: contextOf(res).requestId, checks }, 'not ready');
    res.setHeader('cache-control', 'no-store');
    sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks });
  });

  app.use((req: Request, res: Response) => {
    sendError(res, new TesseraError('route_not_found'), String(res.getHeader('x-request-id') ?? ''));
  });

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    deps.logger.error({ err }, 'fields request failed');
    if (res.headersSent) return void res.destroy();
    sendError(res, new TesseraError('internal_error', { cause: err }), String(res.getHeader('x-request-id') ?? ''));
  });

  return app;
}

/** A card or a CVC in JSON: a few hundred bytes; anything past this is no card. */
const BROWSER_BODY_LIMIT_BYTES = 16_384;

const JSON_ANSWER_HEADERS = Object.entries(SERVICE_SECURITY_HEADERS);

/**
 * The browser routes, on this origin: the card fields and the CVC field post here, so there is no
 * CORS at all (no Access-Control-Allow-Origin to anyone, no preflight answered), and a merchant
 * page's own script cannot read an answer even if it could send the request. Each is authenticated
 * by the publishable key, the framing origin and the card-testing limits (browserAuth).
 */
function registerBrowserRoutes(app: Express, deps: FieldsAppDeps, browser: NonNullable<FieldsAppDeps['browser']>): void {
  const authDeps: BrowserAuthDeps = {
    ...browser.auth,
    logger: deps.logger,
    trustedProxies: deps.trustedProxies ?? [],
    ...(deps.cardTesting ? { browserLimiter: deps.cardTesting } : {}),
    ...(deps.provisionalTtlUnderAttackSeconds !== undefined
      ? { provisionalTtlUnderAttackSeconds: deps.provisionalTtlUnderAttackSeconds }
      : {}),
  };
  const answersJson = (_req: Request, res: Response, next: NextFunction): void => {
    for (const [name, value] of JSON_ANSWER_HEADERS) res.setHeader(name, value);
    res.setHeader('cache-control', 'no-store');
    next();
  };
  const auth = browserAuth(authDeps);
  const body = jsonObjectBody(BROWSER_BODY_LIMIT_BYTES);
  const routes = browserRoutes(browser.vault, deps.cardTesting);
  const router = express.Router();
  router.post(BROWSER_TOKENS_PATH, answersJson, auth, ...body, routes.createToken);
  router.post(BROWSER_CVC_PATH, answersJson, auth, ...body, routes.attachCvc);
  if (deps.cardTesting) {
    // The proof of work the two routes above demand while the key is under card-testing pressure.
    router.get(
      BROWSER_CHALLENGE_PATH,
      answersJson,
      browserAuth({ ...authDeps, countsAsAttempt: false }),
      browserChallenge(deps.cardTesting),
    );
  }
  router.use('/v1/browser', answersJson, (_req: Request, _res: Response, next: NextFunction) => next(new TesseraError('route_not_found')));
  router.use(errorHandler(deps.logger));
  app.use(router);
}

/** The card form's body: small, flat, urlencoded; anything else arrives empty and fails the CSRF check. */
const formBody = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });

/** Codes the shopper can fix on the page itself: the form is shown again with the message. */
const CORRECTABLE = new Set([
  'parameter_missing',
  'parameter_invalid',
  'card_number_invalid',
  'card_expired',
  'cvv_invalid',
  'test_card_in_live_mode',
  'live_card_in_test_mode',
]);

const NOTICE_TITLES: Record<number, string> = {
  403: 'Form not accepted',
  404: 'Payment page not found',
  410: 'Payment page no longer available',
  429: 'Too many attempts',
};

const SESSION_CLOSED = 'Too many cards were refused on this payment page, so it takes no more. Go back to the shop and start again.';

/** The card arrived without a valid proof of work while the shop is under attack: the page's script solves one (it needs JavaScript). */
const WORK_REQUIRED =
  'This shop is getting unusually many card payments just now. Please submit your card again (this page needs JavaScript for that).';

const waitPhrase = (seconds: number): string => (seconds <= 60 ? 'in a minute' : `in about ${Math.ceil(seconds / 60)} minutes`);

/** The limiter's refusal as the page answers it: its wait, in the shopper's words. */
function refuseOnPage(refusal: RateLimitRefusal, message: string): never {
  throw new TesseraError('rate_limited', { message, retryAfterSeconds: refusal.retryAfterSeconds });
}

/**
 * The card-testing limits of one POST /pay/{id}, in words for the shopper: the limiter's own
 * messages speak of keys and tokenizations, and which limit was hit is not the shopper's (or a
 * card tester's) business. `closed` tells the page the session takes no more cards.
 */
function submissionGuard(
  limiter: BrowserTokenLimiter,
  submission: { clientIp: string | undefined; solution: string | undefined; requestId: string; provisionalTtlUnderAttackSeconds?: number },
  now: () => Date,
): SubmissionGuard & { closed: boolean } {
  const { clientIp, requestId } = submission;
  const tooMany = (refusal: RateLimitRefusal): never =>
    refuseOnPage(refusal, `Too many card payments have been tried just now. Please try again ${waitPhrase(refusal.retryAfterSeconds)}.`);
  const close = (refusal: RateLimitRefusal): never => {
    guard.closed = true;
    return refuseOnPage(refusal, SESSION_CLOSED);
  };
  const guard = {
    closed: false,
    async beforeCard(record: { id: string; keyId: string }) {
      // The per-key limit counts the session's key: the merchant's secret key that opened it, as
      // the browser route counts the publishable key a shopper's card arrives with. It is what the
      // session carries, it is the same unit BROWSER_TOKENS_PER_KEY_PER_MINUTE already means, and a
      // bot opening checkout after checkout on one shop draws on that one key however many sessions
      // or addresses it uses. (Its id never reaches the browser route, so the two budgets stay apart.)
      const [closed, admission] = await Promise.all([
        limiter.formSessionClosed(record.id, requestId),
        limiter.recordAttempt(record.keyId, clientIp, submission.solution, requestId),
      ]);
      if (closed) close(closed);
      if (admission.refusal?.code === 'challenge_required') {
        throw new TesseraError('challenge_required', { message: WORK_REQUIRED, retryAfterSeconds: admission.refusal.retryAfterSeconds });
      }
      if (admission.refusal) tooMany(admission.refusal);
      const ttl = submission.provisionalTtlUnderAttackSeconds;
      return admission.underAttack && ttl !== undefined ? { provisionalTtlSeconds: ttl } : {};
    },
    async admitCard(number: string) {
      const refusal = await limiter.admitCard(number, clientIp, requestId);
      if (refusal) tooMany(refusal);
    },
    async cardRefused(record: { id: string; expiresAt: string }) {
      const closed = await limiter.recordRefusedCard(record.id, Date.parse(record.expiresAt) - now().getTime(), clientIp, requestId);
      if (closed) close(closed);
    },
  };
  return guard;
}

/**
 * The hosted payment page (docs/browser.md): GET shows the form, POST takes the card (body only,
 * with the session's CSRF token, from this origin only) and answers 303 to the registered return
 * URL; POST …/cancel answers 303 to the cancel URL. Never framed (frame-ancestors 'none' and
 * X-Frame-Options), never cached, no referrer.
 */
function registerHostedPage(app: Express, deps: FieldsAppDeps, sessions: HostedPageDeps): void {
  const pageHeaders = (res: Response, redirectUrls: readonly (string | null)[], logoUrl: string | null = null): void => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader(
      'content-security-policy',
      hostedPageCsp({
        scriptHash: deps.assets.hostedScriptHash,
        styleHash: deps.assets.hostedStyleHash,
        redirectOrigins: redirectUrls.filter((u): u is string => u !== null).map((u) => new URL(u).origin),
        imageOrigin: logoUrl === null ? undefined : new URL(logoUrl).origin,
      }),
    );
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('cross-origin-resource-policy', 'same-origin');
    res.setHeader('cache-control', 'no-store');
  };

  /** The codes whose notice links back to the shop: the session is known, and the shopper is done with it. */
  const LINKED_NOTICES = new Set([
    'form_session_expired',
    'form_session_used',
    'payments_unavailable',
    'form_session_processing',
    // As a notice, only for a session the card-testing guard closed.
    'rate_limited',
  ]);

  const notice = async (res: Response, error: TesseraError, id?: string): Promise<void> => {
    const status = error.status >= 500 ? 503 : error.status;
    let link: NoticeLink | undefined;
    if (id !== undefined && LINKED_NOTICES.has(error.code)) {
      // Best effort: a notice without its link is still the right answer.
      const shop = await shopLinkOf(sessions, id).catch(() => undefined);
      if (shop !== undefined) link = { url: shop.url, merchantName: shop.merchantName, locale: shop.locale };
    }
    pageHeaders(res, []);
    res.setHeader('x-tessera-error', error.code);
    setRetryAfter(res, error);
    res.status(status);
    const message =
      error.code === 'csrf_token_invalid'
        ? 'This form was not sent from its payment page. Go back to the shop and start again.'
        : error.code === 'payments_unavailable'
          ? error.message
          : error.status >= 500
            ? 'Payments are temporarily unavailable. Try again in a moment.'
            : error.message;
    res.end(renderHostedNotice(NOTICE_TITLES[status] ?? 'Payment page unavailable', message, link));
  };

  const failed = (res: Response, err: unknown, route: string): TesseraError => {
    const error = err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err });
    if (error.status >= 500)
      deps.logger.error(
        { err: error.cause ?? err, code: error.code, route, requestId: res.getHeader('x-request-id') },
        'hosted page request failed',
      );
    return error;
  };

  const sessionId = (req: Request): string => String(req.params.id ?? '');
  const clientIpOf = (req: Request): string | undefined =>
    resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies ?? []);

  const showForm = async (res: Response, id: string, status: number, errorMessage?: string): Promise<void> => {
    const record = await openFormSessionPage(sessions, id);
    assertPayable(sessions, record);
    if (record.payment?.status === 'processing') throw new TesseraError('form_session_processing');
    const display = record.display ?? DEFAULT_DISPLAY;
    pageHeaders(res, [record.returnUrl, record.cancelUrl], display.logoUrl);
    res.status(status);
    res.end(
      renderHostedPage(deps.assets, {
        sessionId: record.id,
        csrfToken: record.csrfToken,
        cancelable: record.cancelUrl !== null,
        mode: record.mode,
        display,
        ...(record.terms ? { amount: { minor: record.terms.amount, currency: record.terms.currency } } : {}),
        ...(errorMessage !== undefined ? { errorMessage } : {}),
      }),
    );
  };

  app.get('/pay/:id', async (req: Request, res: Response) => {
    try {
      // A session closed to cards says so on a reload too, rather than offer a form it will refuse.
      const id = sessionId(req);
      const closed = FORM_SESSION_ID_PATTERN.test(id)
        ? await deps.cardTesting?.formSessionClosed(id, String(res.getHeader('x-request-id') ?? ''))
        : undefined;
      if (closed) refuseOnPage(closed, SESSION_CLOSED);
      await showForm(res, id, 200);
    } catch (err) {
      await notice(res, failed(res, err, '/pay/:id'), sessionId(req));
    }
  });

  /**
   * A second line behind the CSRF token: a cross-site form post is marked so by the browser.
   * Sec-Fetch-Site where sent (all current browsers); else Origin, which under this page's
   * no-referrer policy is `null` even for its own posts, so only a foreign origin is refused.
   */
  const fromThisOrigin = (req: Request): boolean => {
    const site = req.headers['sec-fetch-site'];
    if (typeof site === 'string') return site === 'same-origin';
    const origin = req.headers.origin;
    return origin === undefined || origin === 'null' || origin === sessions.fieldsOrigin;
  };

  app.post('/pay/:id', formBody, async (req: Request, res: Response) => {
    const id = sessionId(req);
    const requestId = String(res.getHeader('x-request-id') ?? '');
    const clientIp = clientIpOf(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const solution = body[CHALLENGE_SOLUTION_FIELD];
    const guard = deps.cardTesting
      ? submissionGuard(
          deps.cardTesting,
          {
            clientIp,
            requestId,
            solution: typeof solution === 'string' && solution !== '' ? solution : undefined,
            ...(deps.provisionalTtlUnderAttackSeconds !== undefined
              ? { provisionalTtlUnderAttackSeconds: deps.provisionalTtlUnderAttackSeconds }
              : {}),
          },
          sessions.now,
        )
      : undefined;
    try {
      if (!fromThisOrigin(req)) throw new TesseraError('csrf_token_invalid');
      const outcome = await submitCardForm(sessions, id, body, { requestId, ...(guard ? { guard } : {}) });
      if ('declined' in outcome) {
        // The merchant's own words, escaped and cut to length; the same session takes another card.
        res.setHeader('x-tessera-error', 'payment_declined');
        await showForm(res, id, 402, outcome.declined);
        return;
      }
      res.status(303).setHeader('location', outcome.location);
      res.setHeader('cache-control', 'no-store');
      res.end();
    } catch (err) {
      const error = failed(res, err, '/pay/:id');
      // Whichever page answers below: the form again, or a notice when the form cannot be shown.
      setRetryAfter(res, error);
      // A rate limit passes with time, and a proof of work is the page script's to make: the form
      // stays, with the wait. A closed session does not.
      const retryLater = (error.code === 'rate_limited' || error.code === 'challenge_required') && guard?.closed !== true;
      if (error.code === 'payments_unavailable' || (!CORRECTABLE.has(error.code) && !retryLater && error.status < 500)) {
        return await notice(res, error, id);
      }
      res.setHeader('x-tessera-error', error.code);
      try {
        await showForm(
          res,
          id,
          error.status >= 500 ? 503 : error.status === 429 ? 429 : 400,
          error.status >= 500 ? 'Your card could not be processed just now. Try again in a moment.' : error.message,
        );
      } catch (again) {
        await notice(res, failed(res, again, '/pay/:id'), id);
      }
    }
  });

  /**
   * GET /pay/{id}/challenge: the proof-of-work challenge for this session's next card from this
   * address (the page's script asks on submit, solves it when `required`, and sends the solution in
   * the form's `challenge` field). Bound to the key that opened the session, as the card is counted.
   */
  app.get('/pay/:id/challenge', async (req: Request, res: Response) => {
    const requestId = String(res.getHeader('x-request-id') ?? '');
    try {
      if (!deps.cardTesting) throw new TesseraError('route_not_found');
      if (!fromThisOrigin(req)) throw new TesseraError('csrf_token_invalid');
      const record = await openFormSessionPage(sessions, sessionId(req));
      sendJson(res, 200, await deps.cardTesting.issueChallenge(record.keyId, clientIpOf(req), requestId));
    } catch (err) {
      sendError(res, failed(res, err, '/pay/:id/challenge'), requestId);
    }
  });

  app.post('/pay/:id/cancel', formBody, async (req: Request, res: Response) => {
    try {
      if (!fromThisOrigin(req)) throw new TesseraError('csrf_token_invalid');
      const { location } = await cancelFormSession(sessions, sessionId(req), (req.body ?? {}) as Record<string, unknown>);
      res.status(303).setHeader('location', location);
      res.setHeader('cache-control', 'no-store');
      res.end();
    } catch (err) {
      await notice(res, failed(res, err, '/pay/:id/cancel'), sessionId(req));
    }
  });
}
