import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Cidr } from '@tessera/common';
import { authenticatePublishableKey, framingOriginsOf, type PublishableKeyDeps } from '@tessera/edge';
import type { PepperedKeyStore } from '@tessera/edge';
import type { AdmitCard } from '../app/tokens';
import { CHALLENGE_SOLUTION_HEADER } from '@tessera/edge';
import { corsAllowedOrigin } from '../domain/browserFields';
import { resolveClientIp } from '@tessera/edge';
import type { BrowserTokenLimiter } from '@tessera/edge';
import { sendJson } from '@tessera/edge';
import { admit } from '@tessera/edge';
import type { RateLimiter } from '@tessera/edge';
import { apiKeyOf, contextOf } from '@tessera/edge';

/** The browser tokenization route; the card fields (and later the hosted page) call it. */
export const BROWSER_TOKENS_PATH = '/v1/browser/tokens';
/** The CVC-only field re-collects a token's CVV through this route (tessera.cvcField). */
export const BROWSER_CVC_PATH = '/v1/browser/tokens/:token/cvc';
/** The card fields fetch a proof-of-work challenge here when the key is under card-testing pressure. */
export const BROWSER_CHALLENGE_PATH = '/v1/browser/challenge';

const ALLOWED_REQUEST_HEADERS = `content-type, x-api-key, x-tessera-parent-origin, x-request-id, ${CHALLENGE_SOLUTION_HEADER}`;

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
      res.setHeader('access-control-allow-methods', 'GET, POST');
      res.setHeader('access-control-allow-headers', ALLOWED_REQUEST_HEADERS);
      res.setHeader('access-control-max-age', '600');
    }
    res.setHeader('cache-control', 'no-store');
    res.status(204).end();
  };
}

/** Publishable keys are looked up under every configured pepper and moved to the newest, like secret keys. */
export interface BrowserAuthDeps extends PublishableKeyDeps {
  fieldsOrigin: string;
  trustedProxies: readonly Cidr[];
  /** Its failed-authentication limit only: the per-key request limit is not applied to a public key. */
  rateLimiter?: RateLimiter;
  /** The card-testing limits (proof of work per key, per shopper IP, distinct cards); absent: none. */
  browserLimiter?: BrowserTokenLimiter;
  /**
   * Whether a request on this route is a tokenization attempt for the card-testing limits (default
   * true). Decided by route where the middleware is mounted, not by method: Express answers HEAD
   * through a GET route, so a method test would count a HEAD of the challenge route as a card.
   */
  countsAsAttempt?: boolean;
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
    const fromFields = corsAllowedOrigin(header(req, 'origin'), deps.fieldsOrigin) !== undefined;
    const authentication = await authenticatePublishableKey(deps, {
      presented: req.headers['x-api-key'],
      clientIp: ctx.clientIp,
      requestId: ctx.requestId,
      parentOrigin: fromFields ? header(req, 'x-tessera-parent-origin') : undefined,
      countsAsAttempt: deps.countsAsAttempt !== false,
      challengeSolution: header(req, CHALLENGE_SOLUTION_HEADER),
    });
    admit(ctx, authentication);
    next();
  };
}

/**
 * GET /v1/browser/challenge, behind browserAuth: a proof-of-work challenge (ALTCHA's format, plus
 * `required`: whether the key is under pressure now) for the next card of this key from this
 * address. The card fields ask for it after a `challenge_required` answer, solve it, and send the
 * card again with the solution in the x-tessera-challenge header.
 */
export function browserChallenge(limiter: BrowserTokenLimiter): RequestHandler {
  return async (_req: Request, res: Response) => {
    const ctx = contextOf(res);
    sendJson(res, 200, await limiter.issueChallenge(apiKeyOf(res).id, ctx.clientIp, ctx.requestId));
  };
}

/**
 * The distinct-cards limit as the token route's card-testing check (app/tokens.ts AdmitCard),
 * bound to the request's shopper; the hosted page binds the same limit in its submission guard.
 */
export function browserCardGate(limiter: BrowserTokenLimiter): (res: Response) => AdmitCard {
  return (res) => async (number) => {
    const ctx = contextOf(res);
    const refusal = await limiter.admitCard(number, ctx.clientIp, ctx.requestId);
    if (refusal) throw refusal;
  };
}

/** For the fields page: the allowed origins of a usable publishable key (app/authenticate.ts framingOriginsOf). */
export function frameKeyLookup(deps: PepperedKeyStore & Pick<BrowserAuthDeps, 'logger' | 'now'>) {
  return (presented: string): Promise<{ allowedOrigins: readonly string[] } | undefined> => framingOriginsOf(deps, presented);
}
