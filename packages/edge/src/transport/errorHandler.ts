import type { NextFunction, Request, Response } from 'express';
import { TesseraError, type Logger } from '@tessera/common';
import { sendError } from './envelope';
import { errorFromBodyParser } from './jsonBody';
import { contextOf, routeOf } from './requestContext';

/**
 * The last two handlers of the public app and of the admin router alike: a request no route took
 * answers 404 route_not_found, and whatever a route threw leaves as the documented envelope.
 */
function toTesseraError(err: unknown): TesseraError {
  if (err instanceof TesseraError) return err;
  const fromBody = errorFromBodyParser(err);
  if (fromBody) return fromBody;
  // Express/router raise http-errors for malformed requests (e.g. a bad %-escape in a path).
  const status =
    typeof err === 'object' && err !== null
      ? ((err as { status?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode)
      : undefined;
  if (typeof status === 'number' && status >= 400 && status < 500) return new TesseraError('invalid_request', { cause: err });
  return new TesseraError('internal_error', { cause: err });
}

export function routeNotFound(_req: Request, res: Response): void {
  sendError(res, new TesseraError('route_not_found'), contextOf(res).requestId);
}

export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const error = toTesseraError(err);
    const ctx = contextOf(res);
    const fields = { requestId: ctx.requestId, code: error.code, route: routeOf(req) ?? null };
    if (error.status >= 500) logger.error({ ...fields, err: error.cause ?? err }, 'request failed');
    else if (error.cause !== undefined) logger.info({ ...fields, err: error.cause }, 'request rejected');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, error, ctx.requestId);
  };
}
