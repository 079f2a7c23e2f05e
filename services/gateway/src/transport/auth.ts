import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { TesseraError, type Logger, ipInCidrs, parseCidrList, type Cidr } from '@tessera/common';
import { digestsEqual, hashApiKey, modeOfApiKey } from '../domain/apiKeys';
import { resolveClientIp } from '../domain/clientIp';
import type { ApiKeyStore } from '../store/apiKeyStore';
import { contextOf } from './requestContext';

export interface AuthDeps {
  keyStore: ApiKeyStore;
  pepper: string;
  trustedProxies: readonly Cidr[];
  logger: Logger;
  now: () => Date;
}

/**
 * Authenticates `x-api-key` on every request against the store, with no cache: a revocation
 * takes effect on the very next request, which is what the rotation procedure relies on.
 */
export function createAuthMiddleware(deps: AuthDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = contextOf(res);
    ctx.clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);

    const presented = req.headers['x-api-key'];
    if (presented === undefined || presented === '') throw new TesseraError('api_key_missing');
    // A repeated header arrives joined with ", " and so fails the format check, like any typo.
    const mode = typeof presented === 'string' ? modeOfApiKey(presented) : undefined;
    if (mode === undefined || typeof presented !== 'string') throw new TesseraError('api_key_invalid');

    const digest = hashApiKey(deps.pepper, presented);
    const record = await deps.keyStore.findByDigest(digest);
    if (!record || !digestsEqual(record.digest, digest) || record.revokedAt !== undefined || record.mode !== mode) {
      throw new TesseraError('api_key_invalid');
    }
    if (record.allowedCidrs.length > 0 && !ipInCidrs(ctx.clientIp, parseCidrList(record.allowedCidrs))) {
      throw new TesseraError('ip_not_allowed');
    }

    ctx.apiKey = record;
    // Bookkeeping must neither slow nor fail the request it describes.
    deps.keyStore.touchLastUse(record.id, deps.now(), ctx.clientIp).catch((err: unknown) => {
      deps.logger.warn({ err, keyId: record.id, requestId: ctx.requestId }, 'could not record API key last use');
    });
    next();
  };
}
