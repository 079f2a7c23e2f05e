import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { defineScripts, redisUnavailable as unavailable } from '@tessera/common/redis';
import { CREATE_INDEXED, type CreateIndexedScript } from './createIndexedScript';
import type { LoginThrottle, OperatorRecord, OperatorStore, SessionRecord, SessionStore } from './adminStores';
import { applyOperatorChange, type OperatorChange } from '../domain/operators';
import { ADMIN_KEYS, ADMIN_SLOT } from '@tessera/merchant-data';

/** Only counts up to the lockout thresholds (at most 10) matter: the log of a bucket stays small. */
const MAX_FAILURES_LOGGED = 100;

// Every key here is in the one admin slot (merchant-data's domain/slots.ts): the operator scripts
// and the audit MULTI touch several at once, and no API request reads them. Their names
// (merchant-data's ADMIN_KEYS) are those of the layout before merchant slots, without the slot
// prefix (the gateway's layoutMigration.ts renames them on a standalone Redis).
const OPERATOR_PREFIX = ADMIN_SLOT + ADMIN_KEYS.operator;
const OPERATOR_EMAIL_PREFIX = ADMIN_SLOT + ADMIN_KEYS.operatorEmail;
const ALL_OPERATORS = ADMIN_SLOT + ADMIN_KEYS.allOperators;
const SESSION_PREFIX = ADMIN_SLOT + ADMIN_KEYS.session;
const THROTTLE_PREFIX = ADMIN_SLOT + ADMIN_KEYS.throttle;

async function guarded<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw unavailable(err);
  }
}

/** Layout (each behind the admin slot's tag): `tessera:operator:<id>` JSON, `tessera:operator-email:<email>` -> id, set `tessera:operators`. */
export class RedisOperatorStore implements OperatorStore {
  private readonly scripts: CreateIndexedScript;

  /** The email is the unique index: two concurrent creations of one email cannot both succeed. */
  constructor(private readonly redis: Redis) {
    this.scripts = defineScripts<CreateIndexedScript>(redis, { tesseraCreateIndexed: CREATE_INDEXED });
  }

  create(op: OperatorRecord): Promise<boolean> {
    return guarded(async () => {
      const created = await this.scripts.tesseraCreateIndexed(
        OPERATOR_EMAIL_PREFIX + op.email,
        OPERATOR_PREFIX + op.id,
        ALL_OPERATORS,
        op.id,
        JSON.stringify(op),
      );
      return created === 1;
    });
  }

  get(id: string): Promise<OperatorRecord | undefined> {
    return guarded(async () => {
      const raw = await this.redis.get(OPERATOR_PREFIX + id);
      return raw === null ? undefined : (JSON.parse(raw) as OperatorRecord);
    });
  }

  findByEmail(email: string): Promise<OperatorRecord | undefined> {
    return guarded(async () => {
      const id = await this.redis.get(OPERATOR_EMAIL_PREFIX + email);
      return id === null ? undefined : this.get(id);
    });
  }

  list(): Promise<OperatorRecord[]> {
    return guarded(async () => {
      const ids = await this.redis.smembers(ALL_OPERATORS);
      const ops = await Promise.all(ids.map((id) => this.get(id)));
      return ops.filter((o): o is OperatorRecord => o !== undefined).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    });
  }

  update(id: string, change: OperatorChange): Promise<OperatorRecord | undefined> {
    return guarded(async () => {
      const op = await this.get(id);
      if (!op) return undefined;
      applyOperatorChange(op, change);
      await this.redis.set(OPERATOR_PREFIX + id, JSON.stringify(op), 'XX');
      return op;
    });
  }
}

/** `tessera:admin-session:<sha256 of the id>` JSON with a PX expiry (the idle timeout). */
export class RedisSessionStore implements SessionStore {
  constructor(private readonly redis: Redis) {}

  create(digest: string, session: SessionRecord, ttlMs: number): Promise<void> {
    return guarded(async () => {
      await this.redis.set(SESSION_PREFIX + digest, JSON.stringify(session), 'PX', Math.max(1, Math.floor(ttlMs)));
    });
  }

  get(digest: string): Promise<SessionRecord | undefined> {
    return guarded(async () => {
      const raw = await this.redis.get(SESSION_PREFIX + digest);
      return raw === null ? undefined : (JSON.parse(raw) as SessionRecord);
    });
  }

  touch(digest: string, ttlMs: number): Promise<void> {
    return guarded(async () => {
      await this.redis.pexpire(SESSION_PREFIX + digest, Math.max(1, Math.floor(ttlMs)));
    });
  }

  delete(digest: string): Promise<void> {
    return guarded(async () => {
      await this.redis.del(SESSION_PREFIX + digest);
    });
  }
}

/** INCR and start the window on the first hit, atomically, so a crash cannot leave a counter without expiry. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

/**
 * A sliding window of failures: a sorted set of timestamps under `tessera:admin-login:fail:<bucket>`,
 * trimmed to the window and to the newest entries, expiring with the window.
 */
const FAILURE_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[4]) - 1)
redis.call('PEXPIRE', KEYS[1], window)
return redis.call('ZCARD', KEYS[1])`;
const FAILURES = 'fail:';
const LOCK = 'lock:';
const USED = 'used:';

/** Layout under `tessera:admin-login:`: `<bucket>` attempt counters, `fail:`, `lock:` and `used:` (one-time codes). */
interface ThrottleScripts {
  tesseraLoginHit(key: string, windowMs: string): Promise<[number, number]>;
  tesseraLoginFailure(key: string, nowMs: string, windowMs: string, member: string, maxLogged: string): Promise<number>;
}

export class RedisLoginThrottle implements LoginThrottle {
  private readonly scripts: ThrottleScripts;

  constructor(private readonly redis: Redis) {
    this.scripts = defineScripts<ThrottleScripts>(redis, {
      tesseraLoginHit: { numberOfKeys: 1, lua: HIT_SCRIPT },
      tesseraLoginFailure: { numberOfKeys: 1, lua: FAILURE_SCRIPT },
    });
  }

  hit(bucket: string, windowMs: number): Promise<{ count: number; resetInMs: number }> {
    return guarded(async () => {
      const [count, ttl] = await this.scripts.tesseraLoginHit(THROTTLE_PREFIX + bucket, String(windowMs));
      return { count, resetInMs: ttl };
    });
  }

  reset(bucket: string): Promise<void> {
    return guarded(async () => {
      await this.redis.del(THROTTLE_PREFIX + bucket, THROTTLE_PREFIX + FAILURES + bucket);
    });
  }

  recordFailure(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    return guarded(async () => {
      const member = `${nowMs}:${crypto.randomBytes(6).toString('base64url')}`;
      const count = await this.scripts.tesseraLoginFailure(
        THROTTLE_PREFIX + FAILURES + bucket,
        String(nowMs),
        String(windowMs),
        member,
        String(MAX_FAILURES_LOGGED),
      );
      return Number(count);
    });
  }

  lock(bucket: string, durationMs: number): Promise<void> {
    return guarded(async () => {
      await this.redis.set(THROTTLE_PREFIX + LOCK + bucket, '1', 'PX', Math.max(1, Math.floor(durationMs)));
    });
  }

  lockRemainingMs(bucket: string): Promise<number> {
    return guarded(async () => Math.max(0, await this.redis.pttl(THROTTLE_PREFIX + LOCK + bucket)));
  }

  unlock(bucket: string): Promise<void> {
    return guarded(async () => {
      await this.redis.del(THROTTLE_PREFIX + LOCK + bucket);
    });
  }

  claimOnce(key: string, ttlMs: number): Promise<boolean> {
    return guarded(
      async () => (await this.redis.set(THROTTLE_PREFIX + USED + key, '1', 'PX', Math.max(1, Math.floor(ttlMs)), 'NX')) === 'OK',
    );
  }
}
