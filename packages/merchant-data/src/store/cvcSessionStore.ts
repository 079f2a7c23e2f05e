import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable } from '@tessera/common/redis';
import { CVC_SESSION_RETENTION_MS, type CvcSessionClaim, type CvcSessionRecord, type CvcSessionTarget } from '../domain/cvcSessions';

/**
 * Where CVC sessions live, by the digest of their secret. Single use is decided here, atomically:
 * `claim` moves an open, unexpired session that names exactly this merchant, mode and token to
 * used, so of two concurrent attaches exactly one gets `claimed`. An attach that then fails gives
 * the grant back (`release`) so the shopper can correct a mistyped CVC.
 */
export interface CvcSessionStore {
  create(record: CvcSessionRecord): Promise<void>;
  claim(digest: string, target: CvcSessionTarget, now: Date): Promise<CvcSessionClaim>;
  release(digest: string): Promise<void>;
}

function retentionMs(record: CvcSessionRecord, now: Date): number {
  return Math.max(1000, Date.parse(record.expiresAt) - now.getTime() + CVC_SESSION_RETENTION_MS);
}

const PREFIX = 'tessera:cvc-session:';

interface CvcSessionCommands {
  /** KEYS[1] the session hash; ARGV: merchantId, mode, token, now ms. 1 claimed, 0 used, -1 expired, -2 not found. */
  cvcSessionClaim(key: string, merchantId: string, mode: string, token: string, nowMs: number): Promise<number>;
  /** KEYS[1] the session hash: back to open, if it still exists. */
  cvcSessionRelease(key: string): Promise<number>;
}

/** Compare-and-set on the status field: the one place a grant is taken. Another token's grant reads as unknown. */
const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local f = redis.call('HMGET', KEYS[1], 'merchantId', 'mode', 'token', 'status', 'expiresAtMs')
if f[1] ~= ARGV[1] or f[2] ~= ARGV[2] or f[3] ~= ARGV[3] then return -2 end
if f[4] ~= 'open' then return 0 end
if tonumber(f[5]) <= tonumber(ARGV[4]) then return -1 end
redis.call('HSET', KEYS[1], 'status', 'used')
return 1
`;

const RELEASE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'open')
return 1
`;

const CLAIMS: Record<number, CvcSessionClaim> = { 1: 'claimed', 0: 'used', [-1]: 'expired', [-2]: 'not_found' };

/**
 * Layout: `tessera:cvc-session:<sha256 of the secret, base64url>`, a hash: merchantId, mode, token,
 * keyId, createdAt, expiresAt, expiresAtMs and status (`open` or `used`); it expires
 * CVC_SESSION_RETENTION_MS after the session does. The name carries no hash tag, in a Redis
 * Cluster as on a standalone Redis (the client adds no prefix): every command touches that one
 * key, so its slot is its own. Failures are service_unavailable: a grant that cannot be checked
 * is not granted.
 */
export class RedisCvcSessionStore implements CvcSessionStore {
  private readonly commands: CvcSessionCommands;

  constructor(
    private readonly redis: Redis,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.commands = defineScripts<CvcSessionCommands>(redis, {
      cvcSessionClaim: { numberOfKeys: 1, lua: CLAIM },
      cvcSessionRelease: { numberOfKeys: 1, lua: RELEASE },
    });
  }

  async create(record: CvcSessionRecord): Promise<void> {
    const { digest, ...fields } = record;
    try {
      await this.redis
        .multi()
        .hset(PREFIX + digest, { ...fields, expiresAtMs: String(Date.parse(record.expiresAt)), status: 'open' })
        .pexpire(PREFIX + digest, retentionMs(record, this.now()))
        .exec();
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async claim(digest: string, target: CvcSessionTarget, now: Date): Promise<CvcSessionClaim> {
    try {
      const code = await this.commands.cvcSessionClaim(PREFIX + digest, target.merchantId, target.mode, target.token, now.getTime());
      return CLAIMS[Number(code)] ?? 'not_found';
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async release(digest: string): Promise<void> {
    try {
      await this.commands.cvcSessionRelease(PREFIX + digest);
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
