import type { Redis } from 'ioredis';
import type { Logger } from '@tessera/common';
import {
  ADMIN_KEYS,
  ADMIN_SLOT,
  API_KEY_INDEX,
  apiKeyDigestKey,
  apiKeyLastUseKey,
  type ApiKeyRecord,
  apiKeyRecordKey,
  DETOKENIZATIONS_PREFIX,
  type KeyLocation,
  MERCHANT_SETTINGS_PREFIX,
  merchantSettingsKey,
  merchantSlot,
  REQUEST_LOG_PREFIX,
  REQUEST_STATS_PREFIX,
  STATS_MAX_HOURS,
} from '@tessera/merchant-data';

/**
 * The upgrade from the layout before merchant slots (every gateway key under one name space:
 * prefixed `{tessera-gateway}:` in a Redis Cluster, so in one slot, unprefixed on a standalone
 * Redis) to the one of merchant-data's domain/slots.ts. It copies what it can find through the old indexes, which
 * is everything durable: API keys (record, digest, last use) from the set `tessera:apikeys`, and
 * for every merchant of those keys its settings, request log and its last day of statistics, its
 * detokenization audit; on a standalone Redis also the operators and the admin audit trail (in a
 * Cluster they are already where they stay, in the admin slot). The gateway's Redis user may not
 * SCAN, so what no index names is not copied: idempotency records (read under their old names
 * until the last can have expired, see RedisIdempotencyStore), the idempotency quota counters
 * (the quota starts counting afresh), hosted payment sessions, dashboard sessions (operators sign
 * in again) and rate-limit windows.
 *
 * Copies never overwrite (a key already in the new layout wins) and the old keys are left in
 * place, so running it twice, or from several gateways at once, is harmless, and the version before
 * still finds its data after a roll-back. `tessera:layout` records that it ran: later starts read
 * only that.
 */
export const LAYOUT_KEY = 'tessera:layout';

/** What `tessera:layout` holds. */
export interface LayoutMarker {
  version: 2;
  /** When the first gateway of this layout copied the old keys (ms since the epoch). */
  migratedAt: number;
  /** Whether there was an old layout to copy: only then can old idempotency records be alive. */
  legacyData: boolean;
}

/** The prefix every gateway key had before merchant slots: `{tessera-gateway}:` in a Cluster, none on a standalone Redis. */
export function legacyKeyPrefix(clustered: boolean): string {
  return clustered ? ADMIN_SLOT : '';
}

/**
 * Old records can be written until the last gateway of the old version stops, and live for the
 * replay window after that: a rollout is expected to finish within this margin.
 */
export const ROLLOUT_MARGIN_MS = 3_600_000;

/** Entries of a stream copied per round trip (a request log holds up to REQUEST_LOG_MAX_ENTRIES per merchant). */
const STREAM_BATCH = 1000;

/** The entries keep their ids: the request log's entry ids (its stream ids) stay valid links. */
async function copyStream(redis: Redis, from: string, to: string): Promise<void> {
  let start = '-';
  for (;;) {
    const entries = await redis.xrange(from, start, '+', 'COUNT', STREAM_BATCH);
    if (entries.length === 0) return;
    // One key, so one slot: a pipeline is allowed in a Cluster.
    const batch = redis.pipeline();
    for (const [id, fields] of entries) batch.xadd(to, id, ...fields);
    const failed = (await batch.exec())?.find(([err]) => err !== null);
    if (failed) throw failed[0];
    start = `(${entries[entries.length - 1]![0]}`;
  }
}

/** Copies `from` to `to` (a string, hash, list, set or stream, with its expiry) unless `to` exists or `from` does not. */
async function copyIfAbsent(redis: Redis, from: string, to: string): Promise<boolean> {
  const [type, exists] = await Promise.all([redis.type(from), redis.exists(to)]);
  if (type === 'none' || exists === 1) return false;
  const ttl = await redis.pttl(from);
  if (type === 'string') {
    const value = await redis.get(from);
    if (value === null || (await redis.set(to, value, 'NX')) === null) return false;
  } else if (type === 'hash') {
    await redis.hset(to, await redis.hgetall(from));
  } else if (type === 'list') {
    const items = await redis.lrange(from, 0, -1);
    if (items.length > 0) await redis.rpush(to, ...items);
  } else if (type === 'set') {
    const members = await redis.smembers(from);
    if (members.length > 0) await redis.sadd(to, ...members);
  } else if (type === 'stream') {
    await copyStream(redis, from, to);
  } else {
    return false;
  }
  if (ttl > 0) await redis.pexpire(to, ttl);
  return true;
}

async function copyApiKeys(redis: Redis, legacy: string): Promise<{ merchants: Set<string>; keys: number }> {
  const ids = await redis.smembers(`${legacy}tessera:apikeys`);
  const merchants = new Set<string>();
  for (const id of ids) {
    const raw = await redis.get(`${legacy}tessera:apikey:${id}`);
    if (raw === null) continue;
    const record = JSON.parse(raw) as ApiKeyRecord;
    const location: KeyLocation = { merchantId: record.merchantId, id };
    merchants.add(record.merchantId);
    // The record before its digest, as create does: a digest never leads to a missing record.
    await redis.set(apiKeyRecordKey(location), raw, 'NX');
    await copyIfAbsent(redis, `${legacy}tessera:apikey-lastuse:${id}`, apiKeyLastUseKey(location));
    await redis.set(apiKeyDigestKey(record.digest), JSON.stringify(location), 'NX');
    await redis.hset(API_KEY_INDEX, id, record.merchantId);
  }
  return { merchants, keys: ids.length };
}

async function copyMerchantState(redis: Redis, legacy: string, merchantId: string, now: number): Promise<void> {
  const slot = merchantSlot(merchantId);
  await copyIfAbsent(redis, `${legacy}${MERCHANT_SETTINGS_PREFIX}${merchantId}`, merchantSettingsKey(merchantId));
  await copyIfAbsent(redis, `${legacy}${REQUEST_LOG_PREFIX}${merchantId}`, `${REQUEST_LOG_PREFIX}${slot}`);
  await copyIfAbsent(redis, `${legacy}tessera:detokenizations:merchant:${merchantId}`, `${DETOKENIZATIONS_PREFIX}${slot}`);
  const hour = Math.floor(now / 3_600_000);
  for (let h = hour - STATS_MAX_HOURS; h <= hour; h++) {
    await copyIfAbsent(redis, `${legacy}${REQUEST_STATS_PREFIX}${merchantId}:${h}`, `${REQUEST_STATS_PREFIX}${slot}:${h}`);
  }
}

/** Standalone only: operators and the admin audit trail move behind the admin slot's tag. */
async function copyAdminState(redis: Redis, merchants: Set<string>): Promise<number> {
  const ids = await redis.smembers(ADMIN_KEYS.allOperators);
  for (const id of ids) {
    const raw = await redis.get(ADMIN_KEYS.operator + id);
    if (raw === null) continue;
    const operator = JSON.parse(raw) as { email: string; merchantId?: string | null };
    if (typeof operator.merchantId === 'string') merchants.add(operator.merchantId);
    await copyIfAbsent(redis, ADMIN_KEYS.operator + id, ADMIN_SLOT + ADMIN_KEYS.operator + id);
    await copyIfAbsent(redis, ADMIN_KEYS.operatorEmail + operator.email, ADMIN_SLOT + ADMIN_KEYS.operatorEmail + operator.email);
    await redis.sadd(ADMIN_SLOT + ADMIN_KEYS.allOperators, id);
  }
  await copyIfAbsent(redis, ADMIN_KEYS.auditAll, ADMIN_SLOT + ADMIN_KEYS.auditAll);
  for (const merchantId of merchants) {
    await copyIfAbsent(redis, ADMIN_KEYS.auditMerchant + merchantId, ADMIN_SLOT + ADMIN_KEYS.auditMerchant + merchantId);
  }
  return ids.length;
}

/**
 * Brings the old layout over unless `tessera:layout` says it was; resolves to the marker. Run by
 * the gateway at start and by the keys and admin CLIs before their first command, so that a CLI
 * of this version used before the gateways are upgraded finds the keys too.
 */
export async function migrateToMerchantSlots(redis: Redis, opts: { clustered: boolean; now: () => number }): Promise<LayoutMarker> {
  const existing = await redis.get(LAYOUT_KEY);
  if (existing !== null) return JSON.parse(existing) as LayoutMarker;
  const legacy = legacyKeyPrefix(opts.clustered);
  const { merchants, keys } = await copyApiKeys(redis, legacy);
  const operators = opts.clustered ? 0 : await copyAdminState(redis, merchants);
  for (const merchantId of merchants) await copyMerchantState(redis, legacy, merchantId, opts.now());
  const marker: LayoutMarker = { version: 2, migratedAt: opts.now(), legacyData: keys + operators > 0 };
  // The first gateway's marker stands (several may start at once).
  await redis.set(LAYOUT_KEY, JSON.stringify(marker), 'NX');
  return JSON.parse((await redis.get(LAYOUT_KEY)) ?? JSON.stringify(marker)) as LayoutMarker;
}

/** Until when idempotency records of the old layout may be alive, given the replay window; 0: there are none. */
export function legacyRecordsReadUntil(marker: LayoutMarker, idempotencyTtlMs: number): number {
  return marker.legacyData ? marker.migratedAt + idempotencyTtlMs + ROLLOUT_MARGIN_MS : 0;
}

/**
 * The gateway's upgrade at start: a first attempt to await, then retries with backoff (capped at
 * 5 s) until it succeeds, as a Redis that is up but refuses writes never reconnects. `ready`
 * (a /readyz check) is false until it did; `onMarker` learns the marker.
 */
export function startLayoutMigration(
  redis: Redis,
  opts: { clustered: boolean; logger: Logger; onMarker: (marker: LayoutMarker) => void },
): { firstAttempt: Promise<void>; ready: () => boolean } {
  let ready = false;
  const attempt = async (delayMs: number): Promise<void> => {
    try {
      opts.onMarker(await migrateToMerchantSlots(redis, { clustered: opts.clustered, now: Date.now }));
      ready = true;
    } catch (err) {
      opts.logger.error({ err, retryInMs: delayMs }, 'could not bring the Redis layout up to date; retrying (/readyz reports not ready)');
      setTimeout(() => void attempt(Math.min(delayMs * 2, 5_000)), delayMs).unref();
    }
  };
  return { firstAttempt: attempt(250), ready: () => ready };
}
