import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import type { ApiKeyRecord } from '../domain/apiKeys';

const REQUEST_ID_PATTERN = /^[\w.-]{1,128}$/;

const ID_BYTES = 12;
const IDS_PER_FILL = 128;
const idPool = Buffer.alloc(ID_BYTES * IDS_PER_FILL);
let nextId = IDS_PER_FILL;

/**
 * 12 random bytes per id, drawn from a pool filled 128 ids at a time: one randomFillSync call
 * per id was a measurable share of the gateway's CPU. Every byte is used once.
 */
function newRequestId(): string {
  if (nextId === IDS_PER_FILL) {
    crypto.randomFillSync(idPool);
    nextId = 0;
  }
  const start = nextId++ * ID_BYTES;
  return `req_${idPool.toString('base64url', start, start + ID_BYTES)}`;
}

/** Reuses a caller's id when it is safe to echo and log; otherwise makes one. */
export function chooseRequestId(incoming: string | string[] | undefined): string {
  if (typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming)) return incoming;
  return newRequestId();
}

export interface RequestContext {
  requestId: string;
  startedAt: bigint;
  clientIp?: string;
  apiKey?: ApiKeyRecord;
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
