import type { ApiKeyRecord } from '../domain/apiKeys';

export interface KeyRestrictions {
  allowedCidrs: string[];
  allowedDomains: string[];
  /** Publishable keys only; absent: the record's own field is left out (secret keys have none). */
  allowedOrigins?: string[];
}

/**
 * What authenticating a request needs of the key store: find a presented key, record its use,
 * and move it to the newest pepper. Implementations throw TesseraError('service_unavailable') when
 * the backing store cannot answer, so a dead Redis becomes a 503, never a crash or a silent 401.
 */
export interface ApiKeyLookup {
  findByDigest(digest: string): Promise<ApiKeyRecord | undefined>;
  /** Records a use of the key: given its merchant too, whose slot holds the key (domain/slots.ts). */
  touchLastUse(key: Pick<ApiKeyRecord, 'id' | 'merchantId'>, at: Date, ip: string | undefined): Promise<void>;
  /**
   * Moves a key found under an older pepper to its digest under the newest one (API_KEY_PEPPERS
   * rotation): only if the record still has `fromDigest` and nothing else holds `toDigest`.
   * With equal digests it only records `pepperId` (a key made before records named their pepper).
   * Resolves false when it did not apply (another replica moved it first, or it changed).
   */
  rehashDigest(id: string, fromDigest: string, toDigest: string, pepperId: string): Promise<boolean>;
}

/** What administering keys needs: create, list, restrict, revoke and rotate (schedule the old key's expiry). */
export interface ApiKeyAdmin {
  /** Stores a new key; resolves false (and writes nothing) when its digest is already registered. */
  create(record: ApiKeyRecord): Promise<boolean>;
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
}

/** Where API-key records live: both sides, and the connection's health. */
export interface ApiKeyStore extends ApiKeyLookup, ApiKeyAdmin {
  ping(): Promise<void>;
  close(): Promise<void>;
}
