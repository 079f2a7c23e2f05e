import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { TesseraError, type Cidr } from '@tessera/common';
import {
  admit,
  apiKeyOf,
  authenticatePublishableKey,
  CHALLENGE_SOLUTION_HEADER,
  contextOf,
  framingOriginsOf,
  parseBrowserCvcInput,
  resolveClientIp,
  sendJson,
  type BrowserTokenLimiter,
  type PepperedKeyStore,
  type PublishableKeyDeps,
  type RateLimiter,
} from '@tessera/edge';
import type { TokenRecord__Output } from '@tessera/protos';
import { createBrowserToken, type AdmitCard } from '../app/browserTokens';
import { attachCvcUnderSession } from '../app/cvcAttach';
import type { FieldsVault } from '../app/ports';
import { isFromFieldsPage } from '../domain/browserFields';

/** The browser tokenization route; the card fields call it on their own origin. */
export const BROWSER_TOKENS_PATH = '/v1/browser/tokens';
/** The CVC-only field re-collects a token's CVV through this route (tessera.cvcField). */
export const BROWSER_CVC_PATH = '/v1/browser/tokens/:token/cvc';
/** The card fields fetch a proof-of-work challenge here when the key is under card-testing pressure. */
export const BROWSER_CHALLENGE_PATH = '/v1/browser/challenge';

/** Publishable keys are looked up under every configured pepper and moved to the newest, like secret keys. */
export interface BrowserAuthDeps extends PublishableKeyDeps {
  /** FIELDS_ORIGIN: the only page origin the routes take a card from. */
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
 * Publishable-key authentication for the browser routes. The request must come from Tessera's own
 * card fields (`Origin` = FIELDS_ORIGIN: a merchant page's own script calling the route directly,
 * e.g. a skimmer posting typed digits, is refused, and its browser gets no CORS answer to read),
 * carry a usable publishable key, and name as parent an origin the key allows.
 */
export function browserAuth(deps: BrowserAuthDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = contextOf(res);
    ctx.clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);
    const fromFields = isFromFieldsPage({ origin: header(req, 'origin'), secFetchSite: header(req, 'sec-fetch-site') }, deps.fieldsOrigin);
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
 * The distinct-cards limit as the token route's card-testing check (app/browserTokens.ts AdmitCard),
 * bound to the request's shopper; the hosted page binds the same limit in its submission guard.
 */
export function browserCardGate(limiter: BrowserTokenLimiter): (res: Response) => AdmitCard {
  return (res) => async (number) => {
    const ctx = contextOf(res);
    const refusal = await limiter.admitCard(number, ctx.clientIp, ctx.requestId);
    if (refusal) throw refusal;
  };
}

/** For the fields page: the allowed origins of a usable publishable key (@tessera/edge framingOriginsOf). */
export function frameKeyLookup(deps: PepperedKeyStore & Pick<BrowserAuthDeps, 'logger' | 'now'>) {
  return (presented: string): Promise<{ allowedOrigins: readonly string[] } | undefined> => framingOriginsOf(deps, presented);
}

/** The path's token: one longer than any token we issue is unknown, without asking the vault. */
function tokenParam(req: Request): string {
  const token = req.params.token;
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) throw new TesseraError('token_not_found');
  return token;
}

/**
 * POST /v1/browser/tokens answers the browser with nothing derived from the number beyond brand and
 * last 4: no fingerprint, no BIN. A field added to the token record stays out of this answer until
 * it is added here on purpose.
 */
export interface BrowserTokenJson {
  token: string;
  brand: string;
  last4: string;
  expiryMonth: number;
  expiryYear: number;
}

export function browserTokenJson(record: TokenRecord__Output): BrowserTokenJson {
  return { token: record.token, brand: record.brand, last4: record.last4, expiryMonth: record.expiryMonth, expiryYear: record.expiryYear };
}

/**
 * POST /v1/browser/tokens/{token}/cvc: that the CVC is attached, and nothing about the card: the
 * page already knows the token, and the merchant's server, which opened the CVC session, has the record.
 */
export function browserCvcJson(record: Pick<TokenRecord__Output, 'token'>): { token: string; cvvAvailable: true } {
  return { token: record.token, cvvAvailable: true };
}

/** The browser routes' handlers, behind browserAuth; each answers with what a browser may see. */
export function browserRoutes(vault: Pick<FieldsVault, 'tokenize' | 'attachCvv'>, limiter: BrowserTokenLimiter | undefined) {
  const cardGate = limiter ? browserCardGate(limiter) : undefined;
  return {
    /**
     * POST /v1/browser/tokens: the token is provisional (it expires after BROWSER_TOKEN_TTL_SECONDS
     * unless the merchant's server retains it), so a stolen publishable key fills nothing lasting.
     */
    async createToken(req: Request, res: Response): Promise<void> {
      const ctx = contextOf(res);
      const checks = {
        ...(cardGate ? { admitCard: cardGate(res) } : {}),
        ...(ctx.provisionalTtlSeconds !== undefined ? { provisionalTtlSeconds: ctx.provisionalTtlSeconds } : {}),
      };
      const body = req.body as Record<string, unknown>;
      sendJson(res, 201, browserTokenJson(await createBrowserToken(vault, apiKeyOf(res), body, checks, { requestId: ctx.requestId })));
    },

    /** POST /v1/browser/tokens/{token}/cvc: the CVC-only field, under the same rules and a CVC session. */
    async attachCvc(req: Request, res: Response): Promise<void> {
      const input = parseBrowserCvcInput(req.body as Record<string, unknown>);
      const record = await attachCvcUnderSession(vault, apiKeyOf(res), tokenParam(req), input, { requestId: contextOf(res).requestId });
      sendJson(res, 200, browserCvcJson(record));
    },
  };
}
