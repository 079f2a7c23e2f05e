import type { ServerResponse } from 'node:http';
import type { Response } from 'express';
import { maskCardNumbers, TesseraError } from '@tessera/common';
import { retryAfterSeconds } from '../domain/rateLimit';

/**
 * A 503 says nothing reached a PSP and the same request may be sent again (docs/failure-modes.md);
 * Retry-After says when. A hung vault or proxy is asked again every GRPC_LIVENESS_INTERVAL_MS
 * (500 ms), so a retry a second later meets it in its current state.
 */
const UNAVAILABLE_RETRY_AFTER_SECONDS = retryAfterSeconds(1000);

/**
 * Headers on every response the gateway itself writes (never on a PSP response passed through):
 * bodies hold token metadata or errors, which no cache or MIME sniffer should touch.
 */
export function setServiceHeaders(res: ServerResponse): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('cache-control', 'no-store');
}

/**
 * Writes a JSON answer exactly as Express's res.json would (same headers, same order, same bytes),
 * without its generic machinery (mime lookup, charset rewriting, res.set and res.send's checks).
 * GET and HEAD (conditional requests, no body), statuses without a body, and a response that
 * already has a Content-Type still go through Express.
 */
function writeJson(res: Response, status: number, body: unknown): void {
  const method = res.req.method;
  if (method === 'GET' || method === 'HEAD' || status === 204 || status === 205 || status === 304 || res.hasHeader('content-type')) {
    res.status(status).json(body);
    return;
  }
  const json = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(json)));
  res.end(json, 'utf8');
}

export function sendJson(res: Response, status: number, body: unknown): void {
  setServiceHeaders(res);
  writeJson(res, status, body);
}

function writeRetryAfter(res: ServerResponse, seconds: number | undefined): void {
  if (seconds !== undefined) res.setHeader('retry-after', String(seconds));
}

/**
 * Retry-After for an answer that is not the envelope (the fields origin's HTML pages): the wait
 * the error carries, if any. sendError writes it the same way for every enveloped error.
 */
export function setRetryAfter(res: Response, err: TesseraError): void {
  writeRetryAfter(res, err.retryAfterSeconds);
}

/**
 * The documented envelope; `x-tessera-error` lets callers tell our errors from a PSP's. Every
 * error of the public and the admin API leaves here, so this is where its message and param
 * (which may quote a caller's field name, header or value) are masked, whoever wrote them, and
 * where the wait it carries (a limit's, or a 503's default) becomes Retry-After.
 */
export function sendError(res: Response, err: TesseraError, requestId: string): void {
  writeJson(res, err.status, prepareErrorEnvelope(res, err, requestId));
}

/** The envelope's headers set on `res`, and its body, masked. */
function prepareErrorEnvelope(res: ServerResponse, err: TesseraError, requestId: string): { error: Record<string, unknown> } {
  setServiceHeaders(res);
  res.setHeader('x-tessera-error', err.code);
  const unavailable = err.status === 503 && !res.hasHeader('retry-after') ? UNAVAILABLE_RETRY_AFTER_SECONDS : undefined;
  writeRetryAfter(res, err.retryAfterSeconds ?? unavailable);
  const { message, param, ...rest } = err.toJSON();
  const shown = { ...rest, message: maskCardNumbers(message), ...(param !== undefined ? { param: maskCardNumbers(param) } : {}) };
  return { error: { ...shown, requestId } };
}

/**
 * sendError for a response that is not Express's (the forward proxy's listener and tunnels): the
 * same envelope, headers and masking, written with Node's own calls.
 */
export function writeErrorEnvelope(res: ServerResponse, err: TesseraError, requestId: string): void {
  const json = JSON.stringify(prepareErrorEnvelope(res, err, requestId));
  res.statusCode = err.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(Buffer.byteLength(json)));
  res.end(json, 'utf8');
}
