import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Cidr, Logger } from '@tessera/common';
import { presentedKeyOf } from '../domain/apiKeyDecision';
import { corsAllowedOrigin } from '../domain/browserFields';
import { decideBrowserKey, usablePublishableKey } from '../domain/browserKeys';
import { resolveClientIp } from '../domain/clientIp';
import type { ApiKeyStore } from '../store/apiKeyStore';
import type { BrowserTokenLimiter } from './browserLimits';
import { countFailedAuth, type RateLimiter, type RateLimitRefusal } from './rateLimit';
import { contextOf } from './requestContext';

/** The browser tokenization route; the card fields (and later the hosted page) call it. */
export const BROWSER_TOKENS_PATH = '/v1/browser/tokens';
/** The CVC-only field re-collects a token's CVV through this route (tessera.cvcField). */
export const BROWSER_CVC_PATH = '/v1/browser/tokens/:token/cvc';

const ALLOWED_REQUEST_HEADERS = 'content-type, x-api-key, x-tessera-parent-origin, x-request-id';

/**
 * CORS for the browser route only (secret-key routes send no CORS header at all): the fields
 * origin is echoed, no other; never with credentials; `Vary: Origin` on every answer so a cache
 * never hands one origin's answer to another. A preflight from any other origin gets no
 * Access-Control-Allow-* header, which the browser treats as a refusal.
 */
export function browserCors(fieldsOrigin: string): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    res.vary('Origin');
    const allowed = corsAllowedOrigin(typeof req.headers.origin === 'string' ? req.headers.origin : undefined, fieldsOrigin);
    if (allowed !== undefined) {
      res.setHeader('access-control-allow-origin', allowed);
      res.setHeader('access-control-expose-headers', 'x-request-id');
    }
    if (req.method !== 'OPTIONS') return next();
    if (allowed !== undefined) {
      res.setHeader('access-control-allow-methods', 'POST');
      res.setHeader('access-control-allow-headers', ALLOWED_REQUEST_HEADERS);
      res.setHeader('access-control-max-age', '600');
    }
    res.setHeader('cache-control', 'no-store');
    res.status(204).end();
  };
}

export interface BrowserAuthDeps {
  keyStore: ApiKeyStore;
  pepper: string;
  fieldsOrigin: string;
  trustedProxies: readonly Cidr[];
  logger: Logger;
  now: () => Date;
  rateLimiter?: RateLimiter;
  /** The card-testing limits (per key, per shopper IP, distinct cards); absent: none. */
  browserLimiter?: BrowserTokenLimiter;
}

function refuseWith(res: Response, refusal: RateLimitRefusal): never {
  res.setHeader('retry-after', String(refusal.retryAfterSeconds));
  throw refusal.error;
}

const header = (req: Request, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Publishable-key authentication for the browser route. The request must come from Tessera's own
 * card fields (`Origin` = FIELDS_ORIGIN: a merchant page's own script calling the route directly,
 * e.g. a skimmer posting typed digits, is refused), carry a usable publishable key, and name as
 * parent an origin the key allows. On success the key is the request's key, exactly as a secret
 * key is for POST /v1/token, so the token route below runs unchanged.
 */
export function browserAuth(deps: BrowserAuthDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = contextOf(res);
    ctx.clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);
    const limiter = deps.rateLimiter;
    const blocked = await limiter?.failedAuthBlock(ctx.clientIp, ctx.requestId);
    if (blocked) {
      res.setHeader('retry-after', String(blocked.retryAfterSeconds));
      throw blocked.error;
    }
    const key = presentedKeyOf(deps.pepper, req.headers['x-api-key']);
    const record = key.ok ? await deps.keyStore.findByDigest(key.digest) : undefined;
    const fromFields = header(req, 'origin') === deps.fieldsOrigin;
    const result = decideBrowserKey(key, record, deps.now(), fromFields ? header(req, 'x-tessera-parent-origin') : undefined);
    if (!result.ok) throw await countFailedAuth(limiter, res, ctx, result.code);
    const overLimit = await limiter?.recordKeyRequest(result.record, ctx.requestId);
    ctx.apiKey = result.record;
    if (overLimit) refuseWith(res, overLimit);
    // Card testing: counted once the key is known good, before the body is even read.
    const testing = await deps.browserLimiter?.recordAttempt(result.record.id, ctx.clientIp, ctx.requestId);
    if (testing) refuseWith(res, testing);
    next();
  };
}

/**
 * The distinct-cards limit, for the token route to call with a card that passed validation (only
 * cards that would be tokenized count; a refused card is not tokenized).
 */
export function browserCardGate(limiter: BrowserTokenLimiter) {
  return async (res: Response, number: string): Promise<void> => {
    const ctx = contextOf(res);
    const refusal = await limiter.admitCard(number, ctx.clientIp, ctx.requestId);
    if (refusal) refuseWith(res, refusal);
  };
}

/**
 * For the fields page: the allowed origins of a usable publishable key (its frame-ancestors), or
 * undefined. No origin is checked here: the browser checks the framing page against this list.
 */
export function frameKeyLookup(deps: Pick<BrowserAuthDeps, 'keyStore' | 'pepper' | 'now'>) {
  return async (presented: string): Promise<{ allowedOrigins: readonly string[] } | undefined> => {
    const key = presentedKeyOf(deps.pepper, presented);
    if (!key.ok) return undefined;
    const usable = usablePublishableKey(key, await deps.keyStore.findByDigest(key.digest), deps.now());
    return usable.ok ? { allowedOrigins: usable.record.allowedOrigins ?? [] } : undefined;
  };
}
