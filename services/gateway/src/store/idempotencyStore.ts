import type { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { defineScripts } from './redisScripts';

/**
 * What the store holds per scope: a claim while the first request runs, then its sealed answer.
 * A claim says until when its request may still be running (`lockedUntil`, ms since the epoch);
 * one written by an older gateway has none and simply expires.
 */
export type IdempotencyRecord =
  { state: 'in_progress'; fingerprint: string; lockedUntil?: number } | { state: 'done'; fingerprint: string; sealed: string };

export interface ClaimOptions {
  /** How long the claim blocks duplicates while its request runs. */
  lockTtlMs: number;
  /**
   * How long the record itself is kept. When this is longer than lockTtlMs, a claim whose
   * request never finished (its gateway died) stays visible after lockTtlMs as a stale claim.
   */
  keepMs: number;
  /** Replace a stale claim with a new one (the request may run again) instead of returning it. */
  takeOverStale: boolean;
  now: number;
}

export interface IdempotencyStore {
  /**
   * Claims the scope atomically, or returns what is already there. Exactly one of several
   * concurrent callers gets 'claimed'.
   */
  claim(scope: string, fingerprint: string, opts: ClaimOptions): Promise<'claimed' | IdempotencyRecord>;
  /** Replaces the claim with the answer, kept for ttlMs. */
  complete(scope: string, fingerprint: string, sealed: string, ttlMs: number): Promise<void>;
  /** Drops the claim (the request did nothing; a retry may run it). */
  release(scope: string): Promise<void>;
  close?(): Promise<void>;
}

/** A claim whose request is past its lock: its gateway stopped before recording an answer. */
export function isStaleClaim(record: IdempotencyRecord, now: number): boolean {
  return record.state === 'in_progress' && record.lockedUntil !== undefined && record.lockedUntil <= now;
}

function claimRecord(fingerprint: string, opts: ClaimOptions): IdempotencyRecord {
  return { state: 'in_progress', fingerprint, lockedUntil: opts.now + opts.lockTtlMs };
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, { record: IdempotencyRecord; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  private live(scope: string): IdempotencyRecord | undefined {
    const entry = this.records.get(scope);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.records.delete(scope);
      return undefined;
    }
    return entry.record;
  }

  claim(scope: string, fingerprint: string, opts: ClaimOptions): Promise<'claimed' | IdempotencyRecord> {
    const existing = this.live(scope);
    if (existing && !(opts.takeOverStale && isStaleClaim(existing, opts.now))) return Promise.resolve(existing);
    // Expired entries would otherwise pile up in a long-running development process.
    if (this.records.size > 10_000) for (const key of [...this.records.keys()]) this.live(key);
    this.records.set(scope, { record: claimRecord(fingerprint, opts), expiresAt: this.now() + opts.keepMs });
    return Promise.resolve('claimed');
  }

  complete(scope: string, fingerprint: string, sealed: string, ttlMs: number): Promise<void> {
    this.records.set(scope, { record: { state: 'done', fingerprint, sealed }, expiresAt: this.now() + ttlMs });
    return Promise.resolve();
  }

  release(scope: string): Promise<void> {
    this.records.delete(scope);
    return Promise.resolve();
  }
}

const PREFIX = 'tessera:idempotency:';

/**
 * One atomic step: claim an empty scope, or take over a stale claim when asked (ARGV[4] = '1'),
 * or return what is there. ARGV: claim JSON, keepMs, now, takeOverStale.
 */
const CLAIM_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then
  if ARGV[4] ~= '1' then return current end
  local ok, record = pcall(cjson.decode, current)
  if not (ok and type(record) == 'table' and record.state == 'in_progress' and type(record.lockedUntil) == 'number'
      and record.lockedUntil <= tonumber(ARGV[3])) then
    return current
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

interface IdempotencyScripts {
  tesseraIdempotencyClaim(key: string, claim: string, keepMs: number, now: number, takeOverStale: string): Promise<string | null>;
}

/** `tessera:idempotency:<merchant>:<sha256 of the key>` -> JSON record, with a PX expiry. */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly scripts: IdempotencyScripts;

  constructor(private readonly redis: Redis) {
    this.scripts = defineScripts<IdempotencyScripts>(redis, { tesseraIdempotencyClaim: { numberOfKeys: 1, lua: CLAIM_SCRIPT } });
  }

  async claim(scope: string, fingerprint: string, opts: ClaimOptions): Promise<'claimed' | IdempotencyRecord> {
    try {
      const found = await this.scripts.tesseraIdempotencyClaim(
        PREFIX + scope,
        JSON.stringify(claimRecord(fingerprint, opts)),
        opts.keepMs,
        opts.now,
        opts.takeOverStale ? '1' : '0',
      );
      return found === null ? 'claimed' : (JSON.parse(found) as IdempotencyRecord);
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      throw new TesseraError('service_unavailable', { cause: err });
    }
  }

  async complete(scope: string, fingerprint: string, sealed: string, ttlMs: number): Promise<void> {
    const record: IdempotencyRecord = { state: 'done', fingerprint, sealed };
    await this.redis.set(PREFIX + scope, JSON.stringify(record), 'PX', ttlMs);
  }

  async release(scope: string): Promise<void> {
    await this.redis.del(PREFIX + scope);
  }
}
