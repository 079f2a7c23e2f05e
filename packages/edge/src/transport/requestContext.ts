import type { Request, Response } from 'express';
import { wellFormedRequestId } from '@tessera/protos';
import { type ApiKeyRecord, type ProxyCallFacts, randomId } from '@tessera/merchant-data';

/** Reuses a caller's id when it is safe to echo and log (never one that could be a card number); otherwise makes one. */
export function chooseRequestId(incoming: string | string[] | undefined): string {
  const wellFormed = wellFormedRequestId(incoming);
  if (wellFormed !== undefined) return wellFormed;
  return randomId('req_');
}

export interface RequestContext {
  requestId: string;
  startedAt: bigint;
  clientIp?: string;
  apiKey?: ApiKeyRecord;
  /** Set by the browser route when the key is under card-testing attack: the provisional token's shorter life. */
  provisionalTtlSeconds?: number;
  /** Set by the proxy routes for the request log: the call as parsed, then the PSP's status and time. */
  proxyCall?: ProxyCallFacts;
}

const CONTEXT = Symbol('tessera.requestContext');

type WithContext = Response & { [CONTEXT]?: RequestContext };

export function setContext(res: Response, ctx: RequestContext): void {
  (res as WithContext)[CONTEXT] = ctx;
}

export function contextOf(res: Response): RequestContext {
  const ctx = (res as WithContext)[CONTEXT];
  if (!ctx) throw new Error('request context missing: the request-id middleware must run first');
  return ctx;
}

/** The authenticated key; only routes behind the auth middleware may call this. */
export function apiKeyOf(res: Response): ApiKeyRecord {
  const key = contextOf(res).apiKey;
  if (!key) throw new Error('no authenticated API key: the auth middleware must run first');
  return key;
}

export function routeOf(req: Request): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : undefined;
}
