import { isHttpToken, TesseraError } from '@tessera/common';

export const PSP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type PspMethod = (typeof PSP_METHODS)[number];

/** Case-insensitive (the gateway sends upper case); anything outside the product's five methods is refused. */
export function parsePspMethod(method: string): PspMethod {
  const upper = method.toUpperCase();
  const found = PSP_METHODS.find((m) => m === upper);
  if (found === undefined) {
    throw new TesseraError('parameter_invalid', { param: 'method', message: 'method must be one of get, post, put, patch, delete.' });
  }
  return found;
}

/**
 * Methods an upstream exchange never carries: CONNECT asks for a tunnel, not an answer; TRACE (and
 * IIS's TRACK) echo the request back, cookies and credentials included, to whoever sent it.
 */
const REFUSED_UPSTREAM_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** An inbound route's method, sent as given: any RFC 9110 token but those above. */
export function parseUpstreamMethod(method: string): string {
  if (!isHttpToken(method) || REFUSED_UPSTREAM_METHODS.has(method.toUpperCase())) {
    throw new TesseraError('parameter_invalid', {
      param: 'method',
      message: 'method must be an HTTP method other than CONNECT and TRACE.',
    });
  }
  return method;
}
