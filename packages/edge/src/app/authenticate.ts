import type { ErrorCode, Logger } from '@tessera/common';
import { TesseraError } from '@tessera/common';
import {
  type ApiKeyRecord,
  type ApiKeyLookup,
  decideApiKey,
  decideBrowserKey,
  type MerchantSettings,
  type PresentedKey,
  presentedKeyOf,
  usablePublishableKey,
} from '@tessera/merchant-data';
import type { KeyLookupWithPeek } from '../store/keyLookupWithPeek';
import type { RateLimitRefusal } from '../domain/rateLimit';
import type { WindowCount } from '../store/rateLimitCounter';
import { keepOnCurrentPepper, lookUpApiKey, lookUpUnderOlderPeppers, type PepperedKeyStore } from './keyLookup';
import type { AuthRateLimits, CardTestingAttempts } from './ports';

/**
 * Who may call a route, decided for every key kind in one place: the presented key looked up
 * under every pepper (keyLookup.ts) and moved to the newest, the failed-auth limit per address,
 * the key's own restrictions (addresses, origins), the per-key rate limit (secret keys) or the
 * card-testing limits (publishable keys), and the throttled last-use record. Authentication is
 * never cached: a revocation takes effect on the very next request, which rotation relies on.
 */
export interface AuthenticateDeps extends PepperedKeyStore {
  keyStore: ApiKeyLookup;
  logger: Logger;
  now: () => Date;
  /** Per-key and failed-authentication limits; absent: no limits (unit tests of other concerns). */
  rateLimiter?: AuthRateLimits | undefined;
  /**
   * The key store's lookup that also counts the key's request when its record alone shows it
   * passes and reads the merchant settings: one round trip instead of three (the limiter's read
   * of the client's failed-auth counter leaves beside it). Only where the key store also holds the
   * counters and settings; absent: one read each. Secret-key routes only.
   */
  keyLookupWithPeek?: KeyLookupWithPeek | undefined;
}

/** The request as authentication sees it. */
export interface SecretKeyAttempt {
  presented: string | string[] | undefined;
  clientIp: string | undefined;
  origin: string | undefined;
  requestId: string;
  /**
   * Given the key's merchant settings once the key has passed (the /v1/proxy allowlist). `read` is
   * what the key lookup read along with the key; without it the route starts its own read, in the
   * same turn as the per-key rate-limit count, so on one Redis connection both go out in one
   * auto-pipelined write (docs/PERFORMANCE.md). It must only read: the request may still be refused.
   */
  merchantSettings?: (record: ApiKeyRecord, read?: { settings: MerchantSettings | undefined }) => void;
}

export interface PublishableKeyAttempt {
  presented: string | string[] | undefined;
  clientIp: string | undefined;
  requestId: string;
  /** The page that framed the card fields, when the request came from the fields origin; else undefined. */
  parentOrigin: string | undefined;
  /** Whether this request is a card for the card-testing limits (the challenge route's is not). */
  countsAsAttempt: boolean;
  /** The proof-of-work solution the fields sent, if any. */
  challengeSolution: string | undefined;
}

/** Why a request is refused, and the key to attribute it to in the access log, when it is known. */
export type Authentication =
  | { ok: true; record: ApiKeyRecord; provisionalTtlSeconds?: number }
  | { ok: false; error: TesseraError | RateLimitRefusal; record?: ApiKeyRecord };

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
 * A key that failed authentication (any kind): counts the failure toward the address's
 * failed-auth limit and returns the error to answer, that limit's 429 once it is passed,
 * otherwise the key decision's own `code`.
 */
export async function countFailedAuth(
  limiter: Pick<AuthRateLimits, 'recordFailedAuth'> | undefined,
  attempt: { clientIp: string | undefined; requestId: string },
  code: ErrorCode,
): Promise<TesseraError> {
  return (await limiter?.recordFailedAuth(attempt.clientIp, attempt.requestId)) ?? new TesseraError(code);
}

/** Secret-key routes (every /v1 route but the browser's): one authenticator per process, for its last-use throttle. */
export function secretKeyAuthenticator(deps: AuthenticateDeps): (attempt: SecretKeyAttempt) => Promise<Authentication> {
  const shouldRecordLastUse = createLastUseThrottle();
  return async (attempt) => {
    const limiter = deps.rateLimiter;
    const key = presentedKeyOf(deps.pepper, attempt.presented);
    const lookup = await lookUpKey(deps, key, attempt);
    if (lookup.blocked) return { ok: false, error: lookup.blocked };
    const underCurrent = lookup.record;
    const presented = attempt.presented;
    const found =
      key.ok && underCurrent === undefined && typeof presented === 'string'
        ? await lookUpUnderOlderPeppers(deps, key, presented)
        : undefined;
    const result = key.ok
      ? decideApiKey(found?.key ?? key, found?.record ?? underCurrent, deps.now(), { clientIp: attempt.clientIp, origin: attempt.origin })
      : key;
    // Counted by the lookup on its record, refused on this request (an address or origin it does
    // not allow, an expiry the script read differently): a refused request uses up no key's limit.
    if (!result.ok && lookup.keyRequest !== undefined && underCurrent !== undefined)
      limiter?.takeBackKeyRequest(underCurrent, attempt.requestId);
    // Found under an older pepper, or made before records named their pepper: record the current one.
    if (result.ok && key.ok) keepOnCurrentPepper(deps, result.record, found?.key.digest ?? key.digest, key.digest);
    if (!result.ok && result.code === 'publishable_key_forbidden') {
      // A valid key on the wrong route: not a failed authentication, so it does not count toward
      // the address's failed-auth block; attributed in the access log like any known key.
      return { ok: false, error: new TesseraError('publishable_key_forbidden'), ...(result.record ? { record: result.record } : {}) };
    }
    if (!result.ok) return { ok: false, error: await countFailedAuth(limiter, attempt, result.code) };
    const record = result.record;
    const counted =
      lookup.keyRequest !== undefined
        ? limiter?.keyRequestRefusalOf(lookup.keyRequest)
        : limiter?.recordKeyRequest(record, attempt.requestId);
    attempt.merchantSettings?.(record, lookup.merchantSettings);
    const overLimit = await counted;
    // Attributed in the access log, so an operator sees which key is being throttled.
    if (overLimit) return { ok: false, error: overLimit, record };
    // Bookkeeping must neither slow nor fail the request it describes.
    const usedAt = deps.now();
    if (shouldRecordLastUse(record.id, usedAt, attempt.clientIp)) {
      deps.keyStore.touchLastUse(record, usedAt, attempt.clientIp).catch((err: unknown) => {
        deps.logger.warn({ err, keyId: record.id, requestId: attempt.requestId }, 'could not record API key last use');
      });
    }
    return { ok: true, record };
  };
}

export interface PublishableKeyDeps extends AuthenticateDeps {
  /** The card-testing limits (proof of work per key, per shopper IP, distinct cards); absent: none. */
  browserLimiter?: CardTestingAttempts | undefined;
  /** BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS: the life of a provisional token made while its key is under attack. */
  provisionalTtlUnderAttackSeconds?: number | undefined;
}

/**
 * The browser routes (publishable keys, from Tessera's own card fields): a usable publishable key
 * whose allowed origins name the framing page. No per-key request limit: a public key's budget
 * spent by anyone would refuse everyone; its volume is answered by the proof of work, misbehaving
 * addresses by their own limits.
 */
export async function authenticatePublishableKey(deps: PublishableKeyDeps, attempt: PublishableKeyAttempt): Promise<Authentication> {
  const limiter = deps.rateLimiter;
  const blocked = await limiter?.failedAuthBlock(attempt.clientIp, attempt.requestId);
  if (blocked) return { ok: false, error: blocked };
  const { key, found } = await lookUpApiKey(deps, attempt.presented);
  const result = decideBrowserKey(found?.key ?? key, found?.record, deps.now(), attempt.parentOrigin);
  if (!result.ok) return { ok: false, error: await countFailedAuth(limiter, attempt, result.code) };
  if (key.ok && found) keepOnCurrentPepper(deps, result.record, found.key.digest, key.digest);
  const record = result.record;
  // GET /v1/browser/challenge: asking for a challenge is no card (it stores nothing either).
  if (!attempt.countsAsAttempt) return { ok: true, record };
  // Card testing: counted once the key is known good, before the body is even read.
  const admission = await deps.browserLimiter?.recordAttempt(record.id, attempt.clientIp, attempt.challengeSolution, attempt.requestId);
  if (admission?.refusal) return { ok: false, error: admission.refusal, record };
  const ttl = deps.provisionalTtlUnderAttackSeconds;
  return admission?.underAttack === true && ttl !== undefined ? { ok: true, record, provisionalTtlSeconds: ttl } : { ok: true, record };
}

/**
 * For the fields page: the allowed origins of a usable publishable key (its frame-ancestors), or
 * undefined. No origin is checked here: the browser checks the framing page against this list.
 */
export async function framingOriginsOf(
  deps: PepperedKeyStore & Pick<AuthenticateDeps, 'logger' | 'now'>,
  presented: string,
): Promise<{ allowedOrigins: readonly string[] } | undefined> {
  const { key, found } = await lookUpApiKey(deps, presented);
  if (!key.ok || !found) return undefined;
  const usable = usablePublishableKey(found.key, found.record, deps.now());
  if (!usable.ok) return undefined;
  keepOnCurrentPepper(deps, usable.record, found.key.digest, key.digest);
  return { allowedOrigins: usable.record.allowedOrigins ?? [] };
}

interface KeyLookup {
  blocked?: RateLimitRefusal | undefined;
  record: ApiKeyRecord | undefined;
  /** The key's window, when the lookup counted this request in it. */
  keyRequest?: WindowCount;
  merchantSettings?: { settings: MerchantSettings | undefined };
}

/**
 * The client's failed-auth block and the record of the presented key, read side by side: where
 * the key store can also count and read settings, the key's part is one script in its merchant's
 * slot (which also counts the key's request when the record alone shows it passes, and reads the
 * merchant settings the route needs); otherwise a plain read, and the key's request is counted
 * after the decision. The address's counter is the limiter's own read, issued first so that on
 * one connection it leaves in the same auto-pipelined write as the key's script: it lives in the
 * address's slot, so with that master down it answers by the limiter's deadline
 * (RATE_LIMIT_STORE_TIMEOUT_MS), not the key lookup's command timeout (transport/failOpen.ts).
 */
async function lookUpKey(deps: AuthenticateDeps, key: PresentedKey, attempt: SecretKeyAttempt): Promise<KeyLookup> {
  const limiter = deps.rateLimiter;
  const { clientIp, requestId } = attempt;
  const block = limiter?.failedAuthBlock(clientIp, requestId);
  if (key.ok && deps.keyLookupWithPeek) {
    const windowMs = limiter?.keyRequestWindowMs();
    const [blocked, found] = await Promise.all([
      block,
      deps.keyLookupWithPeek.lookUp(key.digest, {
        ...(windowMs !== undefined ? { countKeyRequest: { windowMs, now: deps.now(), mode: key.mode, kind: key.kind } } : {}),
        readMerchantSettings: attempt.merchantSettings !== undefined,
      }),
    ]);
    // Read beside the key (the counter is in the address's slot, the key in its merchant's), so
    // the key's request may have been counted for a client that is blocked: take it back.
    if (blocked && found.keyRequest !== undefined && found.record !== undefined) limiter?.takeBackKeyRequest(found.record, requestId);
    return {
      blocked,
      record: found.record,
      ...(found.keyRequest ? { keyRequest: found.keyRequest } : {}),
      ...(found.merchantSettings ? { merchantSettings: found.merchantSettings } : {}),
    };
  }
  const [blocked, record] = await Promise.all([block, key.ok ? deps.keyStore.findByDigest(key.digest) : undefined]);
  return { blocked, record };
}
