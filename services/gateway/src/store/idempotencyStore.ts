import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createLogger, type Logger, type WriteAck } from '@tessera/common';
import { AcknowledgedWriter, defineScripts, redisUnavailable, WriteNotAcknowledged, type PipelineCommand } from '@tessera/common/redis';
import { USAGE_SLICES, type UsageWindow } from '../domain/idempotency';
import { inMerchantSlot } from '@tessera/merchant-data';

/**
 * What the store holds per scope: a claim while the first request runs, then its sealed answer,
 * or, for an answer above IDEMPOTENCY_MAX_STORED_BYTES, only its sealed status ('too_large': a
 * retry is refused, never run again). A claim says until when its request may still be running
 * (`lockedUntil`, ms since the epoch); one written by an older gateway has none and simply expires.
 * 'too_large' names its field `sealedStatus`, not `sealed`, so an older gateway that meets it fails
 * (500) instead of replaying an empty answer.
 */
export type IdempotencyRecord =
  | { state: 'in_progress'; fingerprint: string; lockedUntil?: number }
  | { state: 'done'; fingerprint: string; sealed: string }
  | { state: 'too_large'; fingerprint: string; sealedStatus: string };

/** A record that ends a request: its answer, or what is kept of it. */
export type FinalRecord = Exclude<IdempotencyRecord, { state: 'in_progress' }>;

/** A merchant's (per mode) share of the store: bytes of records held over the replay window. */
export interface QuotaOptions {
  owner: string;
  /** New claims are refused once this many bytes are counted; 0: no limit. */
  maxBytes: number;
  window: UsageWindow;
}

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
  /** Refuse a new claim (not a replay, not a take-over) when the owner holds maxBytes already. */
  quota?: QuotaOptions;
}

/**
 * The caller's own claim, as claim() wrote it: release and complete act only while the scope still
 * holds it, so a request that outlived lockTtlMs, its stale claim taken over by a retry, can neither
 * drop nor overwrite the retry's claim. Opaque to callers.
 */
export interface OwnClaim {
  state: 'claimed';
  claim: string;
}

export interface CompleteOptions {
  ttlMs: number;
  /** Replace only this claim; without it, whatever is there (a stale claim answered psp_outcome_unknown). */
  replaces?: OwnClaim;
  /** Counts the stored record against its owner in the window's current slice. */
  quota?: { owner: string; window: UsageWindow };
}

export interface IdempotencyStore {
  /**
   * Claims the scope atomically, or returns what is already there. Exactly one of several
   * concurrent callers gets its OwnClaim; 'over_quota' when the scope is free but its owner is full.
   * Throws service_unavailable when the claim is not acknowledged (IDEMPOTENCY_WRITE_ACK): then the
   * scope is left free, as far as the store can tell, so a retry may claim it.
   */
  claim(scope: string, fingerprint: string, opts: ClaimOptions): Promise<OwnClaim | 'over_quota' | IdempotencyRecord>;
  /**
   * Replaces the claim with the answer (or what is kept of it), kept for opts.ttlMs. Throws when it
   * is not acknowledged (IDEMPOTENCY_WRITE_ACK), though the answer may be kept on the primary, and
   * when opts.replaces is no longer there (a retry took it over: its answer will be kept).
   */
  complete(scope: string, record: FinalRecord, opts: CompleteOptions): Promise<void>;
  /** Drops the caller's own claim, if still there (the request did nothing; a retry may run it). */
  release(scope: string, own: OwnClaim): Promise<void>;
  close?(): Promise<void>;
}

/** A claim whose request is past its lock: its gateway stopped before recording an answer. */
export function isStaleClaim(record: IdempotencyRecord, now: number): boolean {
  return record.state === 'in_progress' && record.lockedUntil !== undefined && record.lockedUntil <= now;
}

function claimRecord(fingerprint: string, opts: ClaimOptions): IdempotencyRecord {
  return { state: 'in_progress', fingerprint, lockedUntil: opts.now + opts.lockTtlMs };
}

/** The stored text of a new claim: its claimId makes it unique, so that only its owner ever drops or replaces it. */
function newClaimText(fingerprint: string, opts: ClaimOptions): string {
  return JSON.stringify({ ...claimRecord(fingerprint, opts), claimId: randomBytes(12).toString('base64url') });
}

/** complete() found another claim than the caller's: a retry took its stale claim over, and the retry's answer is kept. */
export class ClaimTakenOver extends Error {
  constructor() {
    super('the Idempotency-Key claim was taken over by a retry after lockTtlMs; its answer is kept instead');
  }
}

/** Bytes a record takes in the store, as counted against its owner's quota. */
function storedBytes(key: string, value: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(value);
}

export const IDEMPOTENCY_PREFIX = 'tessera:idempotency:';
export const IDEMPOTENCY_USAGE_PREFIX = 'tessera:idempotency-usage:';
const OVER_QUOTA = 'over_quota';

/**
 * Scopes and owners begin with their merchant id (domain/idempotency.ts): a record and its
 * owner's counters sit in the merchant's slot, as the claim script needs them in one slot.
 */
const recordKey = (scope: string): string => IDEMPOTENCY_PREFIX + inMerchantSlot(scope);
const usageKey = (owner: string, slice: number): string => `${IDEMPOTENCY_USAGE_PREFIX}${inMerchantSlot(owner)}:${slice}`;

/**
 * One atomic step: claim an empty scope, or take over a stale claim when asked (ARGV[4] = '1'),
 * or return what is there. A scope that is empty is claimed only while the usage counters
 * (KEYS[2..]) add up to less than ARGV[5] bytes (0: no limit); otherwise 'over_quota'.
 * ARGV: claim JSON, keepMs, now, takeOverStale, maxBytes.
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
else
  local maxBytes = tonumber(ARGV[5])
  if maxBytes > 0 and #KEYS > 1 then
    local used = 0
    for _, count in ipairs(redis.call('MGET', unpack(KEYS, 2))) do
      if count then used = used + tonumber(count) end
    end
    if used >= maxBytes then return '${OVER_QUOTA}' end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

/** Drops a claim only if it is still the one this gateway wrote (ARGV[1], unique by its claimId). */
const RELEASE_OWN_CLAIM = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
`;

/** Sets the answer (ARGV[2], kept ARGV[3] ms) only while the scope holds the caller's own claim (ARGV[1]); 0 otherwise. */
const COMPLETE_OWN_CLAIM = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

/** Where records of the layout before merchant slots are, and until when one may still be alive (ms since the epoch). */
export interface LegacyRecords {
  /** `{tessera-gateway}:` in a Redis Cluster, '' on a standalone Redis. */
  keyPrefix: string;
  readUntil: number;
}

/**
 * The claim script with and without the owner's usage counters (USAGE_SLICES + 1 of them), each
 * with its fixed number of keys: a Redis Cluster client's auto-pipelining sends a command to the
 * node of its first argument, which must therefore be a key, not the number of keys.
 */
interface IdempotencyScripts {
  tesseraIdempotencyClaim(scopeKey: string, ...args: Array<string | number>): Promise<string | null>;
  tesseraIdempotencyClaimCounted(scopeKey: string, ...countersThenArgs: Array<string | number>): Promise<string | null>;
  tesseraIdempotencyReleaseOwnClaim(key: string, claim: string): Promise<number>;
  tesseraIdempotencyCompleteOwnClaim(key: string, claim: string, record: string, ttlMs: number): Promise<number>;
}
const COUNTED_SLICES = USAGE_SLICES + 1;

/**
 * `tessera:idempotency:{m:<merchantId>}:<rest of scope>` -> JSON record, with a PX expiry;
 * `tessera:idempotency-usage:{m:<merchantId>}:<mode>:<slice>` -> bytes of records its owner stored
 * in that slice of the replay window, expiring with the last of them (domain/idempotency.ts,
 * usageWindow). All in the merchant's slot (merchant-data's domain/slots.ts).
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly writer: AcknowledgedWriter;
  private readonly scripts: IdempotencyScripts;

  /**
   * `durability.writeAck`: IDEMPOTENCY_WRITE_ACK; without it writes are relied on as Redis answers them (none).
   * `legacy`: records of the layout before merchant slots, read until they have all expired (see layoutMigration.ts).
   */
  constructor(
    private readonly redis: Redis,
    durability: { writeAck: WriteAck; logger: Logger } = { writeAck: { kind: 'none' }, logger: createLogger('gateway', 'silent') },
    private readonly legacy?: LegacyRecords,
  ) {
    // The claim is sent by name inside the writer's pipeline, followed there by WAIT.
    this.scripts = defineScripts<IdempotencyScripts>(redis, {
      tesseraIdempotencyClaim: { numberOfKeys: 1, lua: CLAIM_SCRIPT },
      tesseraIdempotencyClaimCounted: { numberOfKeys: 1 + COUNTED_SLICES, lua: CLAIM_SCRIPT },
      tesseraIdempotencyReleaseOwnClaim: { numberOfKeys: 1, lua: RELEASE_OWN_CLAIM },
      tesseraIdempotencyCompleteOwnClaim: { numberOfKeys: 1, lua: COMPLETE_OWN_CLAIM },
    });
    this.writer = new AcknowledgedWriter(redis, durability.writeAck, durability.logger, 'IDEMPOTENCY_WRITE_ACK');
  }

  async claim(scope: string, fingerprint: string, opts: ClaimOptions): Promise<OwnClaim | 'over_quota' | IdempotencyRecord> {
    const quota = opts.quota !== undefined && opts.quota.maxBytes > 0 ? opts.quota : undefined;
    const counters = quota ? quota.window.counted.map((slice) => usageKey(quota.owner, slice)) : [];
    if (counters.length !== 0 && counters.length !== COUNTED_SLICES) throw new Error(`a quota counts ${COUNTED_SLICES} slices`);
    const key = recordKey(scope);
    const claim = newClaimText(fingerprint, opts);
    let found: unknown;
    try {
      [found] = await this.writer.write([
        [
          counters.length === 0 ? 'tesseraIdempotencyClaim' : 'tesseraIdempotencyClaimCounted',
          key,
          ...counters,
          claim,
          opts.keepMs,
          opts.now,
          opts.takeOverStale ? '1' : '0',
          quota?.maxBytes ?? 0,
        ],
      ]);
    } catch (err) {
      // Not acknowledged (WAIT fell short), or no answer in time (WAITs queued on a connection
      // whose replica lags): our claim may be on the primary alone, and a failover to a replica
      // that is behind would lose it while its request runs, so a retry would run (pay) again. It
      // is not acted on: the caller gets 503, and the claim, if it is ours, is dropped so that a
      // retry can claim the key (not awaited: it may queue behind those WAITs).
      if (!(err instanceof WriteNotAcknowledged) || err.replies[0] === null) {
        void this.scripts.tesseraIdempotencyReleaseOwnClaim(key, claim).catch(() => undefined);
      }
      throw redisUnavailable(err, 'The Idempotency-Key cannot be recorded durably right now; retry with the same key.');
    }
    if (found === null) return (await this.legacyRecord(scope, key, claim, opts)) ?? { state: 'claimed', claim };
    if (found === OVER_QUOTA) return OVER_QUOTA;
    const { claimId: _claimId, ...record } = JSON.parse(found as string) as IdempotencyRecord & { claimId?: string };
    return record;
  }

  /**
   * A record the scope had in the layout before merchant slots (kept under its old name by the
   * upgrade, which cannot list these), while such records can still be alive: what it holds wins
   * over the claim just made, which is given back, so a request answered or running before the
   * upgrade is replayed or refused, never run twice. A stale claim there is one the caller may take over.
   */
  private async legacyRecord(scope: string, key: string, claim: string, opts: ClaimOptions): Promise<IdempotencyRecord | undefined> {
    if (this.legacy === undefined || opts.now >= this.legacy.readUntil) return undefined;
    let raw: string | null;
    try {
      raw = await this.redis.get(this.legacy.keyPrefix + IDEMPOTENCY_PREFIX + scope);
    } catch (err) {
      // Unread, the old record may hold an answer or a running request, so the claim cannot be
      // acted on; kept, it would hold the key (409, then psp_outcome_unknown) for a request that
      // never ran. In a Cluster the old names sit in another slot than the claim: its master may
      // be failing over alone. Given back (not awaited, as above) so that a retry can claim the key.
      void this.scripts.tesseraIdempotencyReleaseOwnClaim(key, claim).catch(() => undefined);
      throw redisUnavailable(err, 'The Idempotency-Key cannot be checked right now; retry with the same key.');
    }
    if (raw === null) return undefined;
    const record = JSON.parse(raw) as IdempotencyRecord;
    if (opts.takeOverStale && isStaleClaim(record, opts.now)) return undefined;
    await this.scripts.tesseraIdempotencyReleaseOwnClaim(key, claim);
    return record;
  }

  async complete(scope: string, record: FinalRecord, opts: CompleteOptions): Promise<void> {
    const key = recordKey(scope);
    const value = JSON.stringify(record);
    const commands: PipelineCommand[] = [
      opts.replaces === undefined
        ? ['set', key, value, 'PX', opts.ttlMs]
        : ['tesseraIdempotencyCompleteOwnClaim', key, opts.replaces.claim, value, opts.ttlMs],
    ];
    if (opts.quota !== undefined) {
      // One round trip, but not a transaction: the answer must be kept even if counting it fails.
      const counter = usageKey(opts.quota.owner, opts.quota.window.current);
      commands.push(['incrby', counter, storedBytes(key, value)], ['pexpireat', counter, opts.quota.window.currentExpiresAt]);
    }
    const [stored] = await this.writer.write(commands);
    if (stored === 0) throw new ClaimTakenOver();
  }

  async release(scope: string, own: OwnClaim): Promise<void> {
    await this.scripts.tesseraIdempotencyReleaseOwnClaim(recordKey(scope), own.claim);
  }
}
