import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable as unavailable } from '@tessera/common/redis';
import {
  API_KEY_UNDER_DIGEST_LUA,
  apiKeyLastUseKey,
  apiKeyRecordKey,
  apiKeyRecordOfReply,
  merchantSettingsKey,
  parseMerchantSettings,
  RedisApiKeyStore,
  type ApiKeyRecord,
  type MerchantSettings,
} from '@tessera/merchant-data';
import { apiKeyBucket } from '../domain/rateLimit';
import { HIT_WINDOW_LUA, RATE_LIMIT_KEY_PREFIX, type WindowCount } from './rateLimitCounter';

/** What the lookup of an API request does besides finding the key, in the same script. */
export interface KeyLookupOptions {
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
  /** The key's window after counting this request; undefined when it was not counted here. */
  keyRequest?: WindowCount;
  /** Present when asked for and the key was found; undefined inside when the merchant has none. */
  merchantSettings?: { settings: MerchantSettings | undefined };
}

/**
 * The key lookup of an API request together with the key's rate-limit counter and the merchant settings
 * it would otherwise read in further round trips. Only a key store whose backend also holds those
 * (Redis) has it: authenticating an API request then costs one script call and one round trip.
 */
export interface KeyLookupWithPeek {
  lookUp(digest: string, options: KeyLookupOptions): Promise<KeyLookupResult>;
}

/**
 * The lookup of every API request (KeyLookupWithPeek), in the key's merchant's slot: the record
 * and last use as LOOKUP_SCRIPT finds them, the key's own rate-limit window (KEYS[3]) counted
 * (window ARGV[2] ms, '0' for none) when the record alone shows the request passes (ARGV[3] now
 * as an ISO time, ARGV[4] and ARGV[5] the presented mode and kind), and the merchant's settings
 * (KEYS[4], when ARGV[6] is '1'). The caller's decision stays authoritative: it takes the count
 * back if it refuses a key counted here.
 */
const AUTHENTICATE_SCRIPT = `${HIT_WINDOW_LUA}
local function absent(value) return value == nil or value == cjson.null end
local function empty(list) return absent(list) or next(list) == nil end
${API_KEY_UNDER_DIGEST_LUA}
local reply = {raw, redis.call('HGETALL', KEYS[2]), false, false}
local kind = record.kind
if absent(kind) then kind = 'secret' end
local passes = absent(record.revokedAt)
  and (absent(record.expiresAt) or (type(record.expiresAt) == 'string' and record.expiresAt > ARGV[3]))
  and record.mode == ARGV[4] and kind == ARGV[5] and kind == 'secret'
  and empty(record.allowedCidrs) and empty(record.allowedDomains) and empty(record.allowedOrigins)
if ARGV[2] ~= '0' and passes then reply[3] = hitWindow(KEYS[3], ARGV[2]) end
if ARGV[6] == '1' then reply[4] = {redis.call('GET', KEYS[4])} end
return reply`;

/**
 * [record JSON, last use as HGETALL's flat field/value list, the key's counted window or null,
 * [merchant settings JSON or null] or null when not read], or [null] when the record is not there
 * under the digest asked for.
 */
type AuthenticateReply = [(string | null)?, string[]?, ([number, number] | null)?, ([string | null] | null)?];

interface AuthenticateScript {
  tesseraApiKeyAuthenticate(
    recordKey: string,
    lastUseKey: string,
    keyCounterKey: string,
    settingsKey: string,
    ...args: string[]
  ): Promise<AuthenticateReply>;
}

/**
 * The shared key store with the lookup of the gateway's API requests: the rate-limit counters it
 * reads and counts are the gateway's own, so the script that touches them lives here, not in the
 * merchant-data package.
 */
export class RedisKeyStoreWithPeek extends RedisApiKeyStore implements KeyLookupWithPeek {
  private readonly authenticateScript: AuthenticateScript;

  constructor(redis: Redis) {
    super(redis);
    this.authenticateScript = defineScripts<AuthenticateScript>(redis, {
      tesseraApiKeyAuthenticate: { numberOfKeys: 4, lua: AUTHENTICATE_SCRIPT },
    });
  }

  /** The key's counter is RedisRateLimitCounter's and the settings RedisMerchantSettingsStore's, all in this same Redis. */
  async lookUp(digest: string, options: KeyLookupOptions): Promise<KeyLookupResult> {
    const count = options.countKeyRequest;
    let reply: AuthenticateReply | undefined;
    try {
      reply = await this.underDigest(digest, async (location) => {
        const found = await this.authenticateScript.tesseraApiKeyAuthenticate(
          apiKeyRecordKey(location),
          apiKeyLastUseKey(location),
          RATE_LIMIT_KEY_PREFIX + apiKeyBucket(location),
          merchantSettingsKey(location.merchantId),
          digest,
          String(count?.windowMs ?? 0),
          count?.now.toISOString() ?? '',
          count?.mode ?? '',
          count?.kind ?? '',
          options.readMerchantSettings === true ? '1' : '0',
        );
        return typeof found[0] === 'string' ? found : undefined;
      });
    } catch (err) {
      throw unavailable(err);
    }
    const counted = reply?.[2];
    const settings = reply?.[3];
    return {
      record: reply === undefined ? undefined : apiKeyRecordOfReply(reply),
      ...(counted ? { keyRequest: { count: counted[0], resetInMs: counted[1] } } : {}),
      ...(settings ? { merchantSettings: { settings: parseMerchantSettings(settings[0]) } } : {}),
    };
  }
}
