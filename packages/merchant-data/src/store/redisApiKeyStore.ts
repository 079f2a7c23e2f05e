import type { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { defineScripts, redisUnavailable as unavailable } from '@tessera/common/redis';
import { merchantSlot } from '../domain/slots';
import type { ApiKeyRecord } from '../domain/apiKeys';
import type { ApiKeyStore, KeyRestrictions } from './apiKeyStore';

/** Where a key's record is: its merchant's slot, and its id there. The digest index holds it as JSON. */
export interface KeyLocation {
  merchantId: string;
  id: string;
}

export const API_KEY_PREFIX = 'tessera:apikey:';
export const API_KEY_DIGEST_PREFIX = 'tessera:apikey-digest:';
export const API_KEY_LAST_USE_PREFIX = 'tessera:apikey-lastuse:';
/** Hash of every key id -> its merchant id: the admin listing, and where `get(id)` finds a key. */
export const API_KEY_INDEX = 'tessera:apikey-index';

export const apiKeyRecordKey = (key: KeyLocation): string => `${API_KEY_PREFIX}${merchantSlot(key.merchantId)}:${key.id}`;
export const apiKeyLastUseKey = (key: KeyLocation): string => `${API_KEY_LAST_USE_PREFIX}${merchantSlot(key.merchantId)}:${key.id}`;
/** In the digest's own slot (the braces make it its hash tag, and a name the old layout never used). */
export const apiKeyDigestKey = (digest: string): string => `${API_KEY_DIGEST_PREFIX}{${digest}}`;

/** Every merchant that has API keys (revoked ones too): the merchants whose slots hold their logs. */
export async function merchantsWithKeys(redis: Redis): Promise<string[]> {
  return [...new Set(await redis.hvals(API_KEY_INDEX))];
}

/** Digest -> location entries a gateway process remembers (a location never changes while its digest exists). */
const REMEMBERED_LOCATIONS = 10_000;

/**
 * Compare-and-set of a record: writes only if nobody changed it since it was read, so an edit of
 * the restrictions can never undo a revocation made at the same moment on another replica.
 */
const COMPARE_AND_SET_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0`;
const CAS_ATTEMPTS = 5;

/**
 * The record (KEYS[1]) and its last use (KEYS[2]) when the record is under digest ARGV[1]; {false}
 * otherwise. The start of every script that finds a key, the gateway's lookup with its counters too.
 */
export const API_KEY_UNDER_DIGEST_LUA = `
local raw = redis.call('GET', KEYS[1])
if not raw then return {false} end
local ok, record = pcall(cjson.decode, raw)
if not ok or type(record) ~= 'table' or record.digest ~= ARGV[1] then return {false} end`;

/** A key's lookup in its merchant's slot: record and last use, compared with the digest it was found by. */
const LOOKUP_SCRIPT = `${API_KEY_UNDER_DIGEST_LUA}
return {raw, redis.call('HGETALL', KEYS[2])}`;

/**
 * [record JSON, last use as HGETALL's flat field/value list, then what a longer lookup script adds
 * (the gateway's: the key's counted window or null, [merchant settings JSON or null] or null when
 * not read)], or [null] when the record is not there under the digest asked for.
 */
export type ApiKeyLookupReply = [(string | null)?, string[]?, ...unknown[]];

interface KeyStoreScripts {
  tesseraApiKeyCompareAndSet(recordKey: string, expected: string, next: string): Promise<number>;
  tesseraApiKeyLookup(recordKey: string, lastUseKey: string, digest: string): Promise<ApiKeyLookupReply>;
}

function parseRecord(raw: string | null | undefined, lastUse: Record<string, string> | null): ApiKeyRecord | undefined {
  if (raw === null || raw === undefined) return undefined;
  const record = JSON.parse(raw) as ApiKeyRecord;
  // Records written before domain restrictions existed have no such field.
  record.allowedDomains ??= [];
  if (lastUse?.at) record.lastUsedAt = lastUse.at;
  if (lastUse?.ip) record.lastUsedIp = lastUse.ip;
  return record;
}

/** The record of a lookup script's reply, with its last use. */
export function apiKeyRecordOfReply(reply: ApiKeyLookupReply): ApiKeyRecord | undefined {
  const flat = reply[1] ?? [];
  const lastUse: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) lastUse[flat[i] as string] = flat[i + 1] as string;
  return parseRecord(reply[0], lastUse);
}

/**
 * Layout (domain/slots.ts): a key's record `tessera:apikey:{m:<merchantId>}:<id>` (JSON, written
 * on create, edit and revoke only) and its last use, the hash `tessera:apikey-lastuse:{m:…}:<id>`,
 * sit in its merchant's slot, with the merchant's settings and the key's rate window; the digest
 * index `tessera:apikey-digest:{<digest>}` -> {merchantId, id} in the digest's slot; the hash
 * `tessera:apikey-index` of id -> merchant id for the admin API. Last use is kept apart because it
 * is written on every request: a read-modify-write of the record could race with a revocation.
 *
 * An API request knows only the digest, so its key is found in two steps: the digest index names
 * the merchant's slot, and a script there reads the record (checking it is still under that
 * digest); the gateway's lookup (RedisKeyStoreWithPeek there) also counts the request and reads
 * the settings in that script. Each process remembers the location of the
 * digests it found, so after a key's first request a lookup is that one script: one round trip in
 * the merchant's slot (the rate limiter's read of the address's failed-auth counter leaves beside
 * it, in the same write on one connection). The costs: the first request of a key in each process takes a second round trip, and
 * needs the digest's master as well as the merchant's; a create or a pepper move is two steps
 * in two slots instead of one script (see create and rehashDigest). Nothing is cached but where
 * a record is: revocations still take effect on the next request.
 */
export class RedisApiKeyStore implements ApiKeyStore {
  private readonly scripts: KeyStoreScripts;
  private readonly locations = new Map<string, KeyLocation>();

  constructor(protected readonly redis: Redis) {
    this.scripts = defineScripts<KeyStoreScripts>(redis, {
      tesseraApiKeyLookup: { numberOfKeys: 2, lua: LOOKUP_SCRIPT },
      tesseraApiKeyCompareAndSet: { numberOfKeys: 1, lua: COMPARE_AND_SET_SCRIPT },
    });
  }

  /**
   * The record first, in its merchant's slot, then the digest claimed in its own: the digest is
   * the unique index (of two creations of one digest only one claims it), and a digest is never
   * claimed for a record that is not there. When the claim fails the record is removed again; a
   * crash in between leaves a record no digest leads to, which authenticates nothing.
   */
  async create(record: ApiKeyRecord): Promise<boolean> {
    const { lastUsedAt: _at, lastUsedIp: _ip, ...stored } = record;
    const location: KeyLocation = { merchantId: record.merchantId, id: record.id };
    try {
      await this.redis.hset(API_KEY_INDEX, record.id, record.merchantId);
      if ((await this.redis.set(apiKeyRecordKey(location), JSON.stringify(stored), 'NX')) === null) return false;
      if ((await this.redis.set(apiKeyDigestKey(record.digest), JSON.stringify(location), 'NX')) !== null) return true;
      await Promise.all([this.redis.del(apiKeyRecordKey(location)), this.redis.hdel(API_KEY_INDEX, record.id)]);
      return false;
    } catch (err) {
      throw unavailable(err);
    }
  }

  private remember(digest: string, location: KeyLocation): void {
    if (this.locations.size >= REMEMBERED_LOCATIONS) this.locations.clear();
    this.locations.set(digest, location);
  }

  /**
   * `read` in the slot of the key under `digest`: first where this process last found it, then,
   * when it is not there (deleted, or moved to another digest), where the digest index says now.
   */
  protected async underDigest<T>(digest: string, read: (location: KeyLocation) => Promise<T | undefined>): Promise<T | undefined> {
    const remembered = this.locations.get(digest);
    if (remembered !== undefined) {
      const found = await read(remembered);
      if (found !== undefined) return found;
      this.locations.delete(digest);
    }
    const raw = await this.redis.get(apiKeyDigestKey(digest));
    if (raw === null) return undefined;
    const location = JSON.parse(raw) as KeyLocation;
    const found = await read(location);
    if (found !== undefined) this.remember(digest, location);
    return found;
  }

  async findByDigest(digest: string): Promise<ApiKeyRecord | undefined> {
    try {
      return await this.underDigest(digest, async (location) =>
        apiKeyRecordOfReply(await this.scripts.tesseraApiKeyLookup(apiKeyRecordKey(location), apiKeyLastUseKey(location), digest)),
      );
    } catch (err) {
      throw unavailable(err);
    }
  }

  private async read(location: KeyLocation): Promise<ApiKeyRecord | undefined> {
    const [raw, lastUse] = await Promise.all([this.redis.get(apiKeyRecordKey(location)), this.redis.hgetall(apiKeyLastUseKey(location))]);
    return parseRecord(raw, lastUse);
  }

  private async locationOf(id: string): Promise<KeyLocation | undefined> {
    const merchantId = await this.redis.hget(API_KEY_INDEX, id);
    return merchantId === null ? undefined : { merchantId, id };
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    try {
      const location = await this.locationOf(id);
      return location === undefined ? undefined : await this.read(location);
    } catch (err) {
      throw unavailable(err);
    }
  }

  async list(): Promise<ApiKeyRecord[]> {
    try {
      const index = await this.redis.hgetall(API_KEY_INDEX);
      const records = await Promise.all(Object.entries(index).map(([id, merchantId]) => this.read({ merchantId, id })));
      return records.filter((r): r is ApiKeyRecord => r !== undefined).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Read-modify-write of the stored JSON under compare-and-set; retried when another writer won. */
  private async modify(id: string, change: (record: ApiKeyRecord) => boolean): Promise<ApiKeyRecord | undefined> {
    try {
      const location = await this.locationOf(id);
      if (location === undefined) return undefined;
      const key = apiKeyRecordKey(location);
      for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
        const raw = await this.redis.get(key);
        if (raw === null) return undefined;
        const record = JSON.parse(raw) as ApiKeyRecord;
        if (!change(record)) return await this.read(location);
        const written = await this.scripts.tesseraApiKeyCompareAndSet(key, raw, JSON.stringify(record));
        if (written === 1) return await this.read(location);
      }
    } catch (err) {
      throw unavailable(err);
    }
    throw new TesseraError('service_unavailable', {
      cause: new Error(`API key ${id} kept changing; gave up after ${CAS_ATTEMPTS} attempts`),
    });
  }

  async updateRestrictions(id: string, restrictions: KeyRestrictions, at: Date): Promise<ApiKeyRecord | undefined> {
    return this.modify(id, (record) => {
      record.allowedCidrs = [...restrictions.allowedCidrs];
      record.allowedDomains = [...restrictions.allowedDomains];
      if (restrictions.allowedOrigins !== undefined) record.allowedOrigins = [...restrictions.allowedOrigins];
      record.updatedAt = at.toISOString();
      return true;
    });
  }

  async revoke(id: string, at: Date): Promise<ApiKeyRecord | undefined> {
    return this.modify(id, (record) => {
      if (record.revokedAt !== undefined) return false;
      record.revokedAt = at.toISOString();
      return true;
    });
  }

  async scheduleExpiry(id: string, expiresAt: Date): Promise<ApiKeyRecord | undefined> {
    return this.modify(id, (record) => {
      if (record.revokedAt !== undefined) return false;
      if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= expiresAt.getTime()) return false;
      record.expiresAt = expiresAt.toISOString();
      return true;
    });
  }

  /**
   * The record stays where it is (its merchant's slot); only its digest index moves, in three
   * steps over two slots: the new digest is claimed, the record switched to it under
   * compare-and-set, and then the old digest dropped. A lookup in between finds the record under
   * whichever digest the record names (the scripts compare), so never under both; a record that
   * changed meanwhile is left as it is and the claim given back.
   */
  async rehashDigest(id: string, fromDigest: string, toDigest: string, pepperId: string): Promise<boolean> {
    try {
      const location = await this.locationOf(id);
      if (location === undefined) return false;
      const key = apiKeyRecordKey(location);
      const raw = await this.redis.get(key);
      if (raw === null) return false;
      const record = JSON.parse(raw) as ApiKeyRecord;
      if (record.digest !== fromDigest) return false;
      const next = JSON.stringify({ ...record, digest: toDigest, pepperId });
      // Same digest: only the record learns which pepper it is under.
      if (fromDigest === toDigest) return (await this.scripts.tesseraApiKeyCompareAndSet(key, raw, next)) === 1;
      if ((await this.redis.set(apiKeyDigestKey(toDigest), JSON.stringify(location), 'NX')) === null) return false;
      if ((await this.scripts.tesseraApiKeyCompareAndSet(key, raw, next)) !== 1) {
        await this.redis.del(apiKeyDigestKey(toDigest));
        return false;
      }
      await this.redis.del(apiKeyDigestKey(fromDigest));
      this.locations.delete(fromDigest);
      return true;
    } catch (err) {
      throw unavailable(err);
    }
  }

  async touchLastUse(key: KeyLocation, at: Date, ip: string | undefined): Promise<void> {
    try {
      await this.redis.hset(apiKeyLastUseKey(key), ip === undefined ? { at: at.toISOString() } : { at: at.toISOString(), ip });
    } catch (err) {
      throw unavailable(err);
    }
  }

  async ping(): Promise<void> {
    try {
      await this.redis.ping();
    } catch (err) {
      throw unavailable(err);
    }
  }

  async close(): Promise<void> {
    // QUIT lets pending replies arrive; on a dead connection it could only time out.
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
