import type { Response } from 'express';
import type { RequestFacts } from '@tessera/merchant-data';
import type { RequestContext } from '@tessera/edge';
import { routeOf } from '@tessera/edge';

/**
 * What the request log keeps of a finished request, read off the response: copied as it is (the
 * masking happens later, off the request's path, in app/requestLog.ts). Only for requests made
 * with one of a merchant's keys; undefined otherwise (no merchant to file it under).
 */
export function requestFactsOf(res: Response, ctx: RequestContext, ms: number): RequestFacts | undefined {
  const key = ctx.apiKey;
  if (key === undefined) return undefined;
  const req = res.req;
  const code = res.getHeader('x-tessera-error');
  return {
    at: new Date(),
    merchantId: key.merchantId,
    requestId: ctx.requestId,
    keyId: key.id,
    mode: key.mode,
    method: req.method,
    route: routeOf(req) ?? 'unmatched',
    path: req.path,
    status: res.statusCode,
    code: typeof code === 'string' ? code : null,
    ms,
    aborted: !res.writableFinished,
    ...(ctx.proxyCall ? { proxy: ctx.proxyCall } : {}),
  };
}
