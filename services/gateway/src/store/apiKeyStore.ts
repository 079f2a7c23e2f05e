import type { ApiKeyRecord, MerchantSettings } from '@tessera/merchant-data';
import type { WindowCount } from './rateLimitCounter';

export type { ApiKeyRecord };

export interface KeyRestrictions {
  allowedCidrs: string[];
  allowedDomains: string[];
  /** Publishable keys only; absent: the record's own field is left out (secret keys have none). */
  allowedOrigins?: string[];
}

/**
 * Where API-key records live. Implementations throw TesseraError('service_unavailable') when the
 * backing store cannot answer, so a dead Redis becomes a 503, never a crash or a silent 401.
 */
export interface ApiKeyStore {
  /** Stores a new key; resolves false (and writes nothing) when its digest is already registered. */
  create(record: ApiKeyRecord): Promise<boolean>;
  findByDigest(digest: string): Promise<ApiKeyRecord | undefined>;
  get(id: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /**
   * Replaces a key's restrictions; never un-revokes (a concurrent revocation wins). Undefined when
   * there is no such key.
   */
  updateRestrictions(id: string, restrictions: KeyRestrictions, at: Date): Promise<ApiKeyRecord | undefined>;
  /** Marks a key revoked, keeping the first revocation time; undefined when there is no such key. */
  revoke(id: string, at: Date): Promise<ApiKeyRecord | undefined>;
  /**
   * Schedules a key's expiry (overlapping rotation). Only ever brings it forward: an earlier
   * expiry already set is kept, and a revoked key is left as it is. Undefined when there is no such key.
   */
  scheduleExpiry(id: string, expiresAt: Date): Promise<ApiKeyRecord | undefined>;
  /** Records a use of the key: given its merchant too, whose slot holds the key (domain/slots.ts). */
  touchLastUse(key: Pick<ApiKeyRecord, 'id' | 'merchantId'>, at: Date, ip: string | undefined): Promise<void>;
  /**
   * Moves a key found under an older pepper to its digest under the newest one (API_KEY_PEPPERS
   * rotation): only if the record still has `fromDigest` and nothing else holds `toDigest`.
   * With equal digests it only records `pepperId` (a key made before records named their pepper).
   * Resolves false when it did not apply (another replica moved it first, or it changed).
   */
  rehashDigest(id: string, fromDigest: string, toDigest: string, pepperId: string): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What the lookup of an API request does besides finding the key, in the same script. */
export interface KeyLookupOptions {
  /** The client's failed-auth counter to read (RateLimitCounter.peek), when that limit is on. */
  failedAuthBucket?: string;
  /**
   * Counts the request in the key's own window (RateLimitCounter.hit on `apiKeyBucket(key)`) when its
   * record alone shows it passes: active, unexpired at `now`, of the presented mode and kind, secret,
   * and with no IP, domain or origin restriction, which depend on the request and are judged by
   * the caller. Otherwise nothing is counted and the caller counts after its own decision.
   */
  countKeyRequest?: { windowMs: number; now: Date; mode: string; kind: string };
  /** Also reads the key's merchant's settings (the PSP host allowlist of /v1/proxy). */
  readMerchantSettings?: boolean;
}

export interface KeyLookupResult {
  record: ApiKeyRecord | undefined;
  /**
   * The failed-auth counter's window; zero when none was asked for. Undefined when it could not be
   * read: it lives in the client address's slot, not the key's, and the limit fails open.
   */
  failedAuth: WindowCount | undefined;
  /** The key's window after counting this request; undefined when it was not counted here. */
  keyRequest?: WindowCount;
  /** Present when asked for and the key was found; undefined inside when the merchant has none. */
  merchantSettings?: { settings: MerchantSettings | undefined };
}

/**
 * The key lookup of an API request together with the rate-limit counters and the merchant settings
 * it would otherwise read in further round trips. Only a key store whose backend also holds those
 * (Redis) has it: authenticating an API request then costs one script call and one round trip.
 */
export interface KeyLookupWithPeek {
  lookUp(digest: string, options: KeyLookupOptions): Promise<KeyLookupResult>;
}
