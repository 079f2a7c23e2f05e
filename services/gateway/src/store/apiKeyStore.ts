import type { ApiKeyRecord } from '../domain/apiKeys';
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
  touchLastUse(id: string, at: Date, ip: string | undefined): Promise<void>;
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

/**
 * A key lookup that also reads a rate-limit counter (as RateLimitCounter.peek would) in the same
 * step. Only a key store whose backend also holds the rate-limit counters has it (Redis): the
 * authentication of an API request then costs one command and one round trip instead of two.
 */
export interface KeyLookupWithPeek {
  findByDigestAndPeek(digest: string, bucket: string): Promise<{ record: ApiKeyRecord | undefined; window: WindowCount }>;
}
