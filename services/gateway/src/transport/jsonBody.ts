import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { TesseraError } from '@tessera/common';

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  return (header.split(';')[0] ?? '').trim().toLowerCase() === 'application/json';
}

/**
 * Body handling for POST routes, run after authentication so that an anonymous caller cannot make
 * us read or parse a megabyte: content type (415), size (413) and syntax (400) checks, then
 * the body must be a JSON object. One handler rather than three: each router layer costs a
 * dispatch per request.
 */
export function jsonObjectBody(limitBytes: number): RequestHandler[] {
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true });
  const jsonObject: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    if (!isJsonContentType(req.headers['content-type'])) throw new TesseraError('unsupported_media_type');
    parse(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) return next(err);
      const body: unknown = req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return next(new TesseraError('invalid_request', { message: 'The request body must be a JSON object.' }));
      }
      next();
    });
  };
  return [jsonObject];
}

/**
 * body-parser reports its failures with a `type`; each maps to one catalogue code. The original
 * error is deliberately not kept as the cause: body-parser attaches the raw body to it, and that
 * body may hold a card number that would then reach the logs.
 */
export function errorFromBodyParser(err: unknown): TesseraError | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err)) return undefined;
  switch ((err as { type: unknown }).type) {
    case 'entity.too.large':
      return new TesseraError('body_too_large');
    case 'entity.parse.failed':
      return new TesseraError('invalid_json');
    case 'encoding.unsupported':
      return new TesseraError('unsupported_media_type', { message: 'The request body content encoding is not supported.' });
    case 'charset.unsupported':
      return new TesseraError('unsupported_media_type', { message: 'The request body charset is not supported; use utf-8.' });
    case 'request.aborted':
    case 'request.size.invalid':
      return new TesseraError('invalid_request', { message: 'The request body was incomplete.' });
    default:
      return undefined;
  }
}
