import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Cidr } from '@tessera/common';
import { secretKeyAuthenticator, type Authentication, type AuthenticateDeps } from '../app/authenticate';
import type { ApiKeyRecord, MerchantSettings } from '@tessera/merchant-data';
import { resolveClientIp } from '../domain/clientIp';
import { contextOf, type RequestContext } from './requestContext';

export interface AuthDeps extends AuthenticateDeps {
  trustedProxies: readonly Cidr[];
  /** Gives the route the key's merchant settings once the key has passed (SecretKeyAttempt.merchantSettings). */
  merchantSettings?: (record: ApiKeyRecord, res: Response, read?: { settings: MerchantSettings | undefined }) => void;
}

/** The decision applied to the request: its key for the route and the access log, or the refusal to answer. */
export function admit(ctx: RequestContext, authentication: Authentication): void {
  if (authentication.record) ctx.apiKey = authentication.record;
  if (!authentication.ok) throw authentication.error;
  if (authentication.provisionalTtlSeconds !== undefined) ctx.provisionalTtlSeconds = authentication.provisionalTtlSeconds;
}

/** Secret-key authentication of `x-api-key` (app/authenticate.ts), for every /v1 route but the browser's. */
export function createAuthMiddleware(deps: AuthDeps): RequestHandler {
  const authenticate = secretKeyAuthenticator(deps);
  const { merchantSettings } = deps;
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = contextOf(res);
    ctx.clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);
    const authentication = await authenticate({
      presented: req.headers['x-api-key'],
      clientIp: ctx.clientIp,
      origin: typeof req.headers.origin === 'string' ? req.headers.origin : undefined,
      requestId: ctx.requestId,
      ...(merchantSettings ? { merchantSettings: (record, read) => merchantSettings(record, res, read) } : {}),
    });
    admit(ctx, authentication);
    next();
  };
}
