import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { TesseraError, type Logger, type Cidr } from '@tessera/common';
import { keepOnCurrentPepper, lookUpUnderOlderPeppers } from '../app/keyLookup';
import { decideApiKey, presentedKeyOf, type PresentedKey } from '../domain/apiKeyDecision';
import { resolveClientIp } from '../domain/clientIp';
import type { RateLimitRefusal } from '../domain/rateLimit';
import type { ApiKeyRecord, ApiKeyStore, KeyLookupWithPeek } from '../store/apiKeyStore';
import type { MerchantSettings } from '../store/merchantSettingsStore';
import type { WindowCount } from '../store/rateLimitCounter';
import { countFailedAuth, type RateLimiter } from './rateLimit';
import { contextOf } from './requestContext';

export interface AuthDeps {
  keyStore: ApiKeyStore;
  pepper: string;
  /**
   * Older peppers of API_KEY_PEPPERS, newest first: a key not found under `pepper` is looked up
   * under each, and when it passes it is moved to `pepper` (so a pepper rotation invalidates no key).
   */
  previousPeppers?: readonly string[];
  trustedProxies: readonly Cidr[];
  logger: Logger;
  now: () => Date;
  /** Per-key and failed-authentication limits; absent: no limits (unit tests of other concerns). */
  rateLimiter?: RateLimiter;
  /**
   * The key store's lookup that also reads the client's failed-auth counter, counts the key's
   * request when its record alone shows it passes, and reads the merchant settings: one round trip
   * instead of three. Only where the key store also holds the counters and settings; absent: one
   * read each.
   */
  keyLookupWithPeek?: KeyLookupWithPeek;
  /**
   * Gives the route the key's merchant settings (the PSP host allowlist of /v1/proxy) once the key
   * has passed. `read` is what the key lookup read along with the key; without it the route starts
   * its own read, in the same turn as the per-key rate-limit count, so on one Redis connection both
   * go out in one auto-pipelined write (see docs/PERFORMANCE.md). It must only read, as the request
   * may still be refused (429).
   */
  merchantSettings?: (record: ApiKeyRecord, res: Response, read?: { settings: MerchantSettings | undefined }) => void;
}

/**
 * "Last used" is shown to the second in the dashboard; writing it on every request would cost
 * a Redis write per call for no visible gain. Only this bookkeeping is throttled, never the
 * key lookup itself.
 */
export const LAST_USE_WRITE_INTERVAL_MS = 1000;

/** Remembers what this process last wrote per key, so repeated uses within the interval skip the write. */
export function createLastUseThrottle(intervalMs = LAST_USE_WRITE_INTERVAL_MS, maxKeys = 10_000) {
  const written = new Map<string, { atMs: number; ip: string | undefined }>();
  return (keyId: string, at: Date, ip: string | undefined): boolean => {
    const last = written.get(keyId);
    if (last !== undefined && last.ip === ip && at.getTime() - last.atMs < intervalMs) return false;
    if (written.size >= maxKeys && last === undefined) written.clear();
    written.set(keyId, { atMs: at.getTime(), ip });
    return true;
  };
}

/**
 * Authenticates `x-api-key` on every request against the store, with no cache: a revocation
 * takes effect on the very next request, which is what the rotation procedure relies on.
 */
export function createAuthMiddleware(deps: AuthDeps): RequestHandler {
  const shouldRecordLastUse = createLastUseThrottle();
  return async (req: Request, res: Response, next: NextFunction) => {
    const ctx = contextOf(res);
    ctx.clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    const limiter = deps.rateLimiter;
    const key = presentedKeyOf(deps.pepper, req.headers['x-api-key']);
    const lookup = await lookUpKey(deps, key, ctx.clientIp, ctx.requestId);
    if (lookup.blocked) throw lookup.blocked;
    const underCurrent = lookup.record;
    const presented = req.headers['x-api-key'];
    const found =
      key.ok && underCurrent === undefined && typeof presented === 'string'
        ? await lookUpUnderOlderPeppers(deps, key, presented)
        : undefined;
    const result = key.ok
      ? decideApiKey(found?.key ?? key, found?.record ?? underCurrent, deps.now(), { clientIp: ctx.clientIp, origin })
      : key;
    // Counted by the lookup on its record, refused on this request (an address or origin it does
    // not allow, an expiry the script read differently): a refused request uses up no key's limit.
    if (!result.ok && lookup.keyRequest !== undefined && underCurrent !== undefined)
      limiter?.takeBackKeyRequest(underCurrent, ctx.requestId);
    // Found under an older pepper, or made before records named their pepper: record the current one.
    if (result.ok && key.ok) keepOnCurrentPepper(deps, result.record, found?.key.digest ?? key.digest, key.digest);
    if (!result.ok && result.code === 'publishable_key_forbidden') {
      // A valid key on the wrong route: not a failed authentication, so it does not count toward
      // the address's failed-auth block; attributed in the access log like any known key.
      if (result.record) ctx.apiKey = result.record;
      throw new TesseraError('publishable_key_forbidden');
    }
    if (!result.ok) throw await countFailedAuth(limiter, ctx, result.code);
    const record = result.record;
    const counted =
      lookup.keyRequest !== undefined ? limiter?.keyRequestRefusalOf(lookup.keyRequest) : limiter?.recordKeyRequest(record, ctx.requestId);
    deps.merchantSettings?.(record, res, lookup.merchantSettings);
    const overLimit = await counted;
    if (overLimit) {
      // Attributed in the access log, so an operator sees which key is being throttled.
      ctx.apiKey = record;
      throw overLimit;
    }

    ctx.apiKey = record;
    // Bookkeeping must neither slow nor fail the request it describes.
    const usedAt = deps.now();
    if (shouldRecordLastUse(record.id, usedAt, ctx.clientIp)) {
      deps.keyStore.touchLastUse(record, usedAt, ctx.clientIp).catch((err: unknown) => {
        deps.logger.warn({ err, keyId: record.id, requestId: ctx.requestId }, 'could not record API key last use');
      });
    }
    next();
  };
}

interface KeyLookup {
  blocked?: RateLimitRefusal | undefined;
  record: ApiKeyRecord | undefined;
  /** The key's window, when the lookup counted this request in it. */
  keyRequest?: WindowCount;
  merchantSettings?: { settings: MerchantSettings | undefined };
}

/**
 * The client's failed-auth block and the record of the presented key, read together: where the
 * key store can also read the counters, in one round trip (a script in the key's merchant's slot,
 * which also counts the key's request when the record alone shows it passes and reads the
 * merchant settings the route needs, beside a read of the address's counter); otherwise side by
 * side, and the key's request is counted after the decision.
 */
async function lookUpKey(deps: AuthDeps, key: PresentedKey, clientIp: string | undefined, requestId: string): Promise<KeyLookup> {
  const limiter = deps.rateLimiter;
  if (key.ok && deps.keyLookupWithPeek) {
    const bucket = limiter?.failedAuthBucketToCheck(clientIp);
    const windowMs = limiter?.keyRequestWindowMs();
    const found = await deps.keyLookupWithPeek.lookUp(key.digest, {
      ...(bucket !== undefined ? { failedAuthBucket: bucket } : {}),
      ...(windowMs !== undefined ? { countKeyRequest: { windowMs, now: deps.now(), mode: key.mode, kind: key.kind } } : {}),
      readMerchantSettings: deps.merchantSettings !== undefined,
    });
    // Read beside the key (the counter is in the address's slot, the key in its merchant's), so
    // the key's request may have been counted for a client that is blocked: take it back.
    const blocked = bucket === undefined || found.failedAuth === undefined ? undefined : limiter?.failedAuthBlockOf(found.failedAuth);
    if (blocked && found.keyRequest !== undefined && found.record !== undefined) limiter?.takeBackKeyRequest(found.record, requestId);
    return {
      blocked,
      record: found.record,
      ...(found.keyRequest ? { keyRequest: found.keyRequest } : {}),
      ...(found.merchantSettings ? { merchantSettings: found.merchantSettings } : {}),
    };
  }
  const [blocked, record] = await Promise.all([
    limiter?.failedAuthBlock(clientIp, requestId),
    key.ok ? deps.keyStore.findByDigest(key.digest) : undefined,
  ]);
  return { blocked, record };
}
