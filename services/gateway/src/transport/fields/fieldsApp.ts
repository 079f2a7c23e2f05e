import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { TesseraError, type Logger } from '@tessera/common';
import { cardFieldsCsp, refusalCsp } from '../../domain/browserFields';
import { sendError } from '../envelope';
import { chooseRequestId } from '../requestContext';
import { renderCardFieldsPage, renderRefusalPage, type CardFieldsAssets } from './cardFieldsPage';

/**
 * What the fields origin needs to know about the publishable key in an iframe URL: the origins
 * that may frame the fields. Undefined: not a usable publishable key (unknown, revoked, expired,
 * a secret key), and the page is refused.
 */
export type FrameKeyLookup = (presentedKey: string) => Promise<{ allowedOrigins: readonly string[] } | undefined>;

export interface FieldsAppDeps {
  assets: CardFieldsAssets;
  /** API_ORIGIN: where the fields send the card. */
  apiOrigin: string;
  lookupKey: FrameKeyLookup;
  logger: Logger;
  hstsMaxAgeSeconds?: number;
}

/** Only something shaped like a publishable key is looked up; a secret key in a URL is refused unread. */
const PUBLISHABLE_KEY_SHAPE = /^tpk_(test|live)_[0-9A-Za-z]{38}$/;

/** Every response of the fields origin: never sniffed, no Referer (the URL holds the key). */
function baseHeaders(res: Response, hstsMaxAgeSeconds: number): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  if (hstsMaxAgeSeconds > 0) res.setHeader('strict-transport-security', `max-age=${hstsMaxAgeSeconds}`);
}

/**
 * The fields origin (FIELDS_PORT): the card-fields iframe page and tessera.js, nothing else. It
 * holds no cookies and no API route: a browser reaches the API only through the fields' fetch.
 */
export function createFieldsApp(deps: FieldsAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const hsts = deps.hstsMaxAgeSeconds ?? 0;
  const page = renderCardFieldsPage(deps.assets, deps.apiOrigin);

  app.use((req: Request, res: Response, next: NextFunction) => {
    baseHeaders(res, hsts);
    res.setHeader('x-request-id', chooseRequestId(req.headers['x-request-id']));
    next();
  });

  const refuse = (res: Response, status: number, message: string): void => {
    res.status(status);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-security-policy', refusalCsp(deps.assets.styleHash));
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('cache-control', 'no-store');
    res.end(renderRefusalPage(message));
  };

  app.get('/fields/v1/card', async (req: Request, res: Response) => {
    const key = typeof req.query.key === 'string' ? req.query.key : '';
    if (!PUBLISHABLE_KEY_SHAPE.test(key)) return refuse(res, 400, 'These card fields need a publishable key (tpk_…).');
    let found: { allowedOrigins: readonly string[] } | undefined;
    try {
      found = await deps.lookupKey(key);
    } catch (err) {
      deps.logger.error({ err, route: '/fields/v1/card' }, 'could not look up the publishable key of a card-fields page');
      return refuse(res, 503, 'The card fields are temporarily unavailable.');
    }
    if (found === undefined) return refuse(res, 404, 'This publishable key cannot be used (unknown, revoked or expired).');
    res.status(200);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader(
      'content-security-policy',
      cardFieldsCsp({
        scriptHash: deps.assets.scriptHash,
        styleHash: deps.assets.styleHash,
        apiOrigin: deps.apiOrigin,
        allowedOrigins: found.allowedOrigins,
      }),
    );
    // So pages that require COEP (require-corp) can still embed the fields.
    res.setHeader('cross-origin-resource-policy', 'cross-origin');
    // Allowed origins and revocations change: every load asks again.
    res.setHeader('cache-control', 'no-store');
    res.end(page);
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
