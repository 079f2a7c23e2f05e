import type { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { defineScripts, redisUnavailable as unavailable } from '@tessera/common/redis';
import { apiKeyBucket, failedAuthBucket } from '../domain/rateLimit';
import type { ApiKeyRecord, ApiKeyStore, KeyLookupOptions, KeyLookupResult, KeyLookupWithPeek, KeyRestrictions } from './apiKeyStore';
import { CREATE_INDEXED, type CreateIndexedScript } from './createIndexedScript';
import { MERCHANT_SETTINGS_PREFIX, parseMerchantSettings } from './merchantSettingsStore';
import { HIT_WINDOW_LUA, PEEK_WINDOW_LUA, RATE_LIMIT_KEY_PREFIX } from './rateLimitCounter';

const KEY_PREFIX = 'tessera:apikey:';
const DIGEST_PREFIX = 'tessera:apikey-digest:';
const LAST_USE_PREFIX = 'tessera:apikey-lastuse:';
const ALL_KEYS = 'tessera:apikeys';

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
 * A key moved to the newest pepper: its record, old digest and new digest change together, and
 * only if the record is as read, the old digest still names it and the new one is free.
 */
const REHASH_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
if not redis.call('SET', KEYS[3], ARGV[3], 'NX') then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2])
return 1`;

/**
 * A key's lookup: digest -> id, then the record and its last use. The record and last-use keys
 * depend on the id, so KEYS[2] and KEYS[3] are their prefixes: declared as keys so that ioredis
 * puts the cluster hash tag in front of them, which also keeps every key the script touches in
 * the one slot Redis Cluster lets a script use.
 */
const LOOKUP_SCRIPT = `
local id = redis.call('GET', KEYS[1])
if not id then return {false} end
return {false, redis.call('GET', KEYS[2] .. id), redis.call('HGETALL', KEYS[3] .. id)}`;

/**
 * The lookup of every API request (KeyLookupWithPeek), in one round trip: the client's failed-auth
 * counter (KEYS[4], when ARGV[1] is '1'), the key as LOOKUP_SCRIPT finds it, the key's own
 * rate-limit window counted (prefix KEYS[5], window ARGV[3] ms, '0' for none) when the record alone
 * shows the request passes (ARGV[4] now as an ISO time, ARGV[5] and ARGV[6] the presented mode and
 * kind), and the merchant's settings (prefix KEYS[6], when ARGV[7] is '1'). The caller's decision
 * stays authoritative: it takes the count back if it refuses a key counted here.
 */
const AUTHENTICATE_SCRIPT = `${PEEK_WINDOW_LUA}
${HIT_WINDOW_LUA}
local function absent(value) return value == nil or value == cjson.null end
local function empty(list) return absent(list) or next(list) == nil end
local window = false
if ARGV[1] == '1' then window = peekWindow(KEYS[4]) end
local id = redis.call('GET', KEYS[1])
if not id then return {window} end
local raw = redis.call('GET', KEYS[2] .. id)
local reply = {window, raw, redis.call('HGETALL', KEYS[3] .. id), false, false}
if not raw then return reply end
local ok, record = pcall(cjson.decode, raw)
if not ok or type(record) ~= 'table' then return reply end
local failedAuthLimit = tonumber(ARGV[2])
local blocked = window and failedAuthLimit > 0 and window[1] >= failedAuthLimit
local kind = record.kind
if absent(kind) then kind = 'secret' end
local passes = absent(record.revokedAt)
  and (absent(record.expiresAt) or (type(record.expiresAt) == 'string' and record.expiresAt > ARGV[4]))
  and record.mode == ARGV[5] and kind == ARGV[6] and kind == 'secret'
  and empty(record.allowedCidrs) and empty(record.allowedDomains) and empty(record.allowedOrigins)
if ARGV[3] ~= '0' and not blocked and passes then reply[4] = hitWindow(KEYS[5] .. id, ARGV[3]) end
if ARGV[7] == '1' and type(record.merchantId) == 'string' then reply[5] = {redis.call('GET', KEYS[6] .. record.merchantId)} end
return reply`;

/**
 * [failed-auth window or null, record JSON or null, last use as HGETALL's flat field/value list,
 * the key's counted window or null, [merchant settings JSON or null] or null when not read].
 */
type LookupReply = [[number, number] | null, (string | null)?, string[]?, ([number, number] | null)?, ([string | null] | null)?];

interface KeyStoreScripts extends CreateIndexedScript {
  tesseraApiKeyCompareAndSet(recordKey: string, expected: string, next: string): Promise<number>;
  tesseraApiKeyRehash(
    recordKey: string,
    fromDigestKey: string,
    toDigestKey: string,
    expected: string,
    next: string,
    id: string,
  ): Promise<number>;
  tesseraApiKeyLookup(digestKey: string, recordPrefix: string, lastUsePrefix: string): Promise<LookupReply>;
  tesseraApiKeyAuthenticate(
    digestKey: string,
    recordPrefix: string,
    lastUsePrefix: string,
    failedAuthKey: string,
    keyCounterPrefix: string,
    settingsPrefix: string,
    ...args: string[]
  ): Promise<LookupReply>;
}

/**
 * In Cluster mode every gateway key is prefixed with this hash tag, so all of them share one
 * slot: the scripts and MULTIs of the key, operator, audit (and any later) stores touch several
 * keys at once, which Redis Cluster allows only within a slot. Gateway data is small (keys,
 * sessions, counters, replayable responses); the card store, the bulk, shards by token instead.
 * A standalone Redis keeps the unprefixed layout, so moving to a cluster means copying keys.
 * Every gateway client of REDIS_CLUSTER_NODES passes it to createRedisClient.
 */
export const CLUSTER_KEY_PREFIX = '{tessera-gateway}:';
function parseRecord(raw: string | null | undefined, lastUse: Record<string, string> | null): ApiKeyRecord | undefined {
  if (raw === null || raw === undefined) return undefined;
  const record = JSON.parse(raw) as ApiKeyRecord;
  // Records written before domain restrictions existed have no such field.
  record.allowedDomains ??= [];
  if (lastUse?.at) record.lastUsedAt = lastUse.at;
  if (lastUse?.ip) record.lastUsedIp = lastUse.ip;
  return record;
}

function recordOf(reply: LookupReply): ApiKeyRecord | undefined {
  const flat = reply[2] ?? [];
  const lastUse: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) lastUse[flat[i] as string] = flat[i + 1] as string;
  return parseRecord(reply[1], lastUse);
}

/**
 * Layout: `tessera:apikey:<id>` holds the record as JSON (written on create and revoke only),
 * `tessera:apikey-digest:<digest>` -> id, the set `tessera:apikeys` of ids, and last use in the
 * hash `tessera:apikey-lastuse:<id>`. Last use is kept apart because it is written on every
 * request: a read-modify-write of the record could race with a revocation and undo it.
 */
export class RedisApiKeyStore implements ApiKeyStore, KeyLookupWithPeek {
  private readonly scripts: KeyStoreScripts;

  constructor(private readonly redis: Redis) {
    this.scripts = defineScripts<KeyStoreScripts>(redis, {
      tesseraApiKeyLookup: { numberOfKeys: 3, lua: LOOKUP_SCRIPT },
      tesseraApiKeyAuthenticate: { numberOfKeys: 6, lua: AUTHENTICATE_SCRIPT },
      tesseraCreateIndexed: CREATE_INDEXED,
      tesseraApiKeyCompareAndSet: { numberOfKeys: 1, lua: COMPARE_AND_SET_SCRIPT },
      tesseraApiKeyRehash: { numberOfKeys: 3, lua: REHASH_SCRIPT },
    });
  }

  async create(record: ApiKeyRecord): Promise<boolean> {
    const { lastUsedAt: _at, lastUsedIp: _ip, ...stored } = record;
    try {
      const created = await this.scripts.tesseraCreateIndexed(
        DIGEST_PREFIX + record.digest,
        KEY_PREFIX + record.id,
        ALL_KEYS,
        record.id,
        JSON.stringify(stored),
      );
      return created === 1;
    } catch (err) {
      throw unavailable(err);
    }
  }

  async findByDigest(digest: string): Promise<ApiKeyRecord | undefined> {
    try {
      return recordOf(await this.scripts.tesseraApiKeyLookup(DIGEST_PREFIX + digest, KEY_PREFIX, LAST_USE_PREFIX));
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The counters are RedisRateLimitCounter's and the settings RedisMerchantSettingsStore's, all in this same Redis. */
  async lookUp(digest: string, options: KeyLookupOptions): Promise<KeyLookupResult> {
    const count = options.countKeyRequest;
    let reply: LookupReply;
    try {
      reply = await this.scripts.tesseraApiKeyAuthenticate(
        DIGEST_PREFIX + digest,
        KEY_PREFIX,
        LAST_USE_PREFIX,
        RATE_LIMIT_KEY_PREFIX + (options.failedAuthBucket ?? failedAuthBucket(undefined)),
        RATE_LIMIT_KEY_PREFIX + apiKeyBucket(''),
        MERCHANT_SETTINGS_PREFIX,
        options.failedAuthBucket === undefined ? '0' : '1',
        String(options.failedAuthLimit ?? 0),
        String(count?.windowMs ?? 0),
        count?.now.toISOString() ?? '',
        count?.mode ?? '',
        count?.kind ?? '',
        options.readMerchantSettings === true ? '1' : '0',
      );
    } catch (err) {
      throw unavailable(err);
    }
    const [failedCount, failedResetInMs] = reply[0] ?? [0, 0];
    const counted = reply[3];
    const settings = reply[4];
    return {
      record: recordOf(reply),
      failedAuth: { count: failedCount, resetInMs: failedResetInMs },
      ...(counted ? { keyRequest: { count: counted[0], resetInMs: counted[1] } } : {}),
      ...(settings ? { merchantSettings: { settings: parseMerchantSettings(settings[0]) } } : {}),
    };
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    try {
      const [raw, lastUse] = await Promise.all([this.redis.get(KEY_PREFIX + id), this.redis.hgetall(LAST_USE_PREFIX + id)]);
      return parseRecord(raw, lastUse);
    } catch (err) {
      throw unavailable(err);
    }
  }

  async list(): Promise<ApiKeyRecord[]> {
    try {
      const ids = await this.redis.smembers(ALL_KEYS);
      const records = await Promise.all(ids.map((id) => this.get(id)));
      return records.filter((r): r is ApiKeyRecord => r !== undefined).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Read-modify-write of the stored JSON under compare-and-set; retried when another writer won. */
  private async modify(id: string, change: (record: ApiKeyRecord) => boolean): Promise<ApiKeyRecord | undefined> {
    try {
      for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
        const raw = await this.redis.get(KEY_PREFIX + id);
        if (raw === null) return undefined;
        const record = JSON.parse(raw) as ApiKeyRecord;
        if (!change(record)) return await this.get(id);
        const written = await this.scripts.tesseraApiKeyCompareAndSet(KEY_PREFIX + id, raw, JSON.stringify(record));
        if (written === 1) return await this.get(id);
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

  async rehashDigest(id: string, fromDigest: string, toDigest: string, pepperId: string): Promise<boolean> {
    try {
      const raw = await this.redis.get(KEY_PREFIX + id);
      if (raw === null) return false;
      const record = JSON.parse(raw) as ApiKeyRecord;
      if (record.digest !== fromDigest) return false;
      const next = JSON.stringify({ ...record, digest: toDigest, pepperId });
      // Same digest: only the record learns which pepper it is under.
      if (fromDigest === toDigest) return (await this.scripts.tesseraApiKeyCompareAndSet(KEY_PREFIX + id, raw, next)) === 1;
      const done = await this.scripts.tesseraApiKeyRehash(
        KEY_PREFIX + id,
        DIGEST_PREFIX + fromDigest,
        DIGEST_PREFIX + toDigest,
        raw,
        next,
        id,
      );
      return done === 1;
    } catch (err) {
      throw unavailable(err);
    }
  }

  async touchLastUse(id: string, at: Date, ip: string | undefined): Promise<void> {
    try {
      await this.redis.hset(LAST_USE_PREFIX + id, ip === undefined ? { at: at.toISOString() } : { at: at.toISOString(), ip });
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
