import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { TesseraError, type Cidr, type Logger } from '@tessera/common';
import {
  admit,
  authenticatePublishableKey,
  contextOf,
  errorHandler,
  resolveClientIp,
  SERVICE_SECURITY_HEADERS,
  type PublishableKeyDeps,
  type RateLimiter,
} from '@tessera/edge';
import { authorizePublishableKey, pageLocationOf, type CspReportFormat } from '@tessera/merchant-data';
import { recordCspViolations, recordPageReport, type PageReportDeps } from '../app/pageReports';

/** tessera.js posts what it sees on the merchant's payment page here (docs/browser.md, "SAQ A kit"). */
export const PAGE_REPORTS_PATH = '/v1/browser/page-reports';
/** The `report-uri` / `Reporting-Endpoints` target of the policy Tessera recommends for the payment page. */
export const CSP_REPORTS_PATH = '/v1/browser/csp-reports';

/** A report lists at most a few hundred scripts (PAGE_INVENTORY_LIMITS.scriptsPerReport) by URL and hash. */
const PAGE_REPORT_LIMIT = '128kb';
/** A violation report is one small JSON object (the Reporting API batches a few). */
const CSP_REPORT_LIMIT = '32kb';

export interface PageReportRouteDeps extends PageReportDeps {
  /**
   * Publishable-key lookup, as the browser routes do it. `rateLimiter` carries the per-key limit of
   * these two routes (PAGE_REPORTS_PER_KEY_PER_SECOND) and the failed-authentication limit.
   */
  auth: Omit<PublishableKeyDeps, 'logger' | 'browserLimiter' | 'provisionalTtlUnderAttackSeconds' | 'rateLimiter'> & {
    rateLimiter: RateLimiter;
  };
  trustedProxies: readonly Cidr[];
  logger: Logger;
}

const header = (req: Request, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string' || text === '')
    throw new TesseraError('parameter_invalid', { message: 'The body must be JSON.', param: 'body' });
  try {
    return JSON.parse(text);
  } catch {
    throw new TesseraError('parameter_invalid', { message: 'The body must be JSON.', param: 'body' });
  }
}

/**
 * The two routes a merchant's page (not Tessera's iframe) posts to. Both take the publishable key
 * in the query (`?key=tpk_…`): a beacon and a browser's violation report cannot set a header. The
 * key must allow the page's origin; the per-key limit refuses a flood with 429. Neither answer
 * carries anything: 204, or the error envelope.
 *
 * - POST /v1/browser/page-reports: tessera.js's report, a text/plain JSON body (a CORS-safelisted
 *   type, so no preflight; tessera.js sends it `no-cors` and reads no answer). The page is the
 *   browser's `Origin`.
 * - POST /v1/browser/csp-reports: `application/csp-report` (report-uri) or `application/reports+json`
 *   (report-to with Reporting-Endpoints). The page is each report's document URL, which must be on
 *   an origin the key allows. The Reporting API sends a CORS preflight for its JSON type, answered
 *   for any origin: these answers hold nothing, and no credential is accepted.
 */
export function registerPageReportRoutes(app: Express, deps: PageReportRouteDeps): void {
  const router = express.Router();
  const answers = (_req: Request, res: Response, next: NextFunction): void => {
    for (const [name, value] of Object.entries(SERVICE_SECURITY_HEADERS)) res.setHeader(name, value);
    res.setHeader('cache-control', 'no-store');
    next();
  };

  /** The key of `?key=`, for the page origin `pageOrigin`; counted against the per-key limit once known good. */
  const authenticate = async (req: Request, res: Response, pageOrigin: string | undefined) => {
    const ctx = contextOf(res);
    ctx.clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);
    const authentication = await authenticatePublishableKey(
      { ...deps.auth, logger: deps.logger },
      {
        presented: typeof req.query.key === 'string' ? req.query.key : undefined,
        clientIp: ctx.clientIp,
        requestId: ctx.requestId,
        parentOrigin: pageOrigin,
        countsAsAttempt: false,
        challengeSolution: undefined,
      },
    );
    admit(ctx, authentication);
    const record = authentication.record;
    if (record === undefined) throw new TesseraError('api_key_invalid');
    // A bucket of its own: these reports never use up anything else counted per key.
    const refusal = await deps.auth.rateLimiter.recordKeyRequest(
      { merchantId: record.merchantId, id: `${record.id}:page-reports` },
      ctx.requestId,
    );
    if (refusal) throw refusal;
    return record;
  };

  const pageBody = express.text({ type: ['text/plain', 'application/json'], limit: PAGE_REPORT_LIMIT });
  router.post(PAGE_REPORTS_PATH, answers, pageBody, async (req: Request, res: Response) => {
    const origin = header(req, 'origin');
    if (origin === undefined || origin === 'null') {
      throw new TesseraError('origin_not_allowed', { message: 'A page report must come from the page (its Origin header).' });
    }
    const key = await authenticate(req, res, origin);
    await recordPageReport(deps, { merchantId: key.merchantId, mode: key.mode, id: key.id }, origin, parseJson(req.body));
    res.status(204).end();
  });

  const cspBody = express.text({
    type: ['application/csp-report', 'application/reports+json', 'application/json'],
    limit: CSP_REPORT_LIMIT,
  });
  const cors = (_req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('access-control-allow-origin', '*');
    next();
  };
  router.options(CSP_REPORTS_PATH, answers, cors, (_req: Request, res: Response) => {
    res.setHeader('access-control-allow-methods', 'POST');
    res.setHeader('access-control-allow-headers', 'content-type');
    res.setHeader('access-control-max-age', '86400');
    res.status(204).end();
  });
  router.post(CSP_REPORTS_PATH, answers, cors, cspBody, async (req: Request, res: Response) => {
    const type = (header(req, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    const format: CspReportFormat = type === 'application/reports+json' ? 'reports+json' : 'csp-report';
    const body = parseJson(req.body);
    // The key must allow the page the report is about; the Origin, when sent, is that page's.
    const first = Array.isArray(body) ? (body[0] as { body?: { documentURL?: unknown } } | undefined)?.body?.documentURL : undefined;
    const documentUrl =
      format === 'reports+json' ? first : (body as { 'csp-report'?: { 'document-uri'?: unknown } })?.['csp-report']?.['document-uri'];
    const pageOrigin = typeof documentUrl === 'string' ? pageLocationOf(documentUrl)?.origin : header(req, 'origin');
    const key = await authenticate(req, res, pageOrigin);
    const allows = (origin: string): boolean => authorizePublishableKey(key, origin) === undefined;
    await recordCspViolations(deps, { merchantId: key.merchantId, mode: key.mode, id: key.id }, allows, format, body);
    res.status(204).end();
  });
  router.use(errorHandler(deps.logger));
  app.use(router);
}
