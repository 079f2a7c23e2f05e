import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { TesseraError } from '@tessera/common';

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  if (header === 'application/json') return true;
  return (header.split(';')[0] ?? '').trim().toLowerCase() === 'application/json';
}

const NOT_AN_OBJECT = 'The request body must be a JSON object.';
const INCOMPLETE = () => new TesseraError('invalid_request', { message: 'The request body was incomplete.' });

function isJsonObject(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

/** on-finished's test, which body-parser applies first: a finished request has no body to read. */
function isFinished(req: Request): boolean {
  const socket = req.socket as Request['socket'] | null;
  return Boolean((req as { upgrade?: boolean }).upgrade || !socket || !socket.readable || (req.complete && !req.readable));
}

/**
 * Reads and parses a plain UTF-8 JSON body of announced length, as body-parser would for it, with
 * three listeners instead of body-parser's raw-body, iconv, type-is and on-finished machinery.
 * `done` gets the parsed value or the TesseraError body-parser's failure maps to.
 */
function readPlainJson(req: Request, length: number, done: (err: TesseraError | undefined, body?: unknown) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    received += chunk.length;
  };
  const finish = (err: TesseraError | undefined, body?: unknown): void => {
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('close', onClose);
    done(err, body);
  };
  const onEnd = (): void => {
    if (received !== length) return finish(INCOMPLETE());
    let text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)).toString('utf8');
    // body-parser decodes with iconv-lite, which drops a byte-order mark.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return finish(new TesseraError('invalid_json'));
    }
    finish(undefined, body);
  };
  // 'close' before 'end': the client went away mid-body (raw-body's 'aborted').
  const onClose = (): void => finish(INCOMPLETE());
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('close', onClose);
}

/**
 * Body handling for POST routes, run after authentication so that an anonymous caller cannot make
 * us read or parse a megabyte: content type (415), size (413) and syntax (400) checks, then
 * the body must be a JSON object. One handler rather than three: each router layer costs a
 * dispatch per request. The common case (`application/json`, optionally `; charset=utf-8`, no content encoding, a
 * Content-Length within the limit) is read directly; everything else (charsets, gzip, chunked
 * bodies, empty or oversized ones) goes through body-parser, whose answers the fast path matches.
 */
export function jsonObjectBody(limitBytes: number): RequestHandler[] {
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true });
  const jsonObject: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    const contentType = req.headers['content-type'];
    if (!isJsonContentType(contentType)) throw new TesseraError('unsupported_media_type');
    const lengthHeader = req.headers['content-length'];
    const length = lengthHeader === undefined ? NaN : Number(lengthHeader);
    if (
      (contentType === 'application/json' || contentType === 'application/json; charset=utf-8') &&
      req.headers['content-encoding'] === undefined &&
      req.headers['transfer-encoding'] === undefined &&
      length > 0 &&
      length <= limitBytes &&
      !isFinished(req)
    ) {
      readPlainJson(req, length, (err, body) => {
        if (err !== undefined) return next(err);
        req.body = body;
        if (!isJsonObject(body)) return next(new TesseraError('invalid_request', { message: NOT_AN_OBJECT }));
        next();
      });
      return;
    }
    parse(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) return next(err);
      if (!isJsonObject(req.body)) return next(new TesseraError('invalid_request', { message: NOT_AN_OBJECT }));
      next();
    });
  };
  return [jsonObject];
}

/**
 * For POST routes whose body is optional (POST /v1/token/{token}/retain): a request without one
 * (no Content-Length or 0, no Transfer-Encoding, the test body-parser itself uses) gets `{}`;
 * one with a body goes through every check of jsonObjectBody.
 */
export function optionalJsonObjectBody(limitBytes: number): RequestHandler[] {
  const withBody = jsonObjectBody(limitBytes);
  const optional: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
      req.body = {};
      next();
      return;
    }
    const [check] = withBody;
    if (check === undefined) return next();
    return check(req, res, next);
  };
  return [optional];
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
