import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createLogger, isTestCard, TesseraError } from '@tessera/common';
import { parseKeyRing, type EnvKeyRing } from '../domain/keyRing';
import type { CardToTokenize, StoredCard, StoredCvv } from '../domain/card';
import {
  COMPACT_RECORD_VERSION,
  isCompactRecord,
  parseCompactCard,
  parseCompactCvv,
  serializeCompactCard,
  serializeCompactCvv,
} from '../domain/compactCard';
import { RedisCardStore } from '../store/redisCardStore';
import { CARD_KEY_PREFIX, CVV_KEY_PREFIX } from '../store/records';
import { Vault, type VaultOptions } from '../app/vault';
import type { RedisServerHandle } from '@tessera/test-support';

export function keyRingEntry(keyId: string, key: Buffer = randomBytes(32)): string {
  return `${keyId}:${key.toString('base64')}`;
}

/** A ring from entries as VAULT_KEYS would list them; the last is the current key. */
export function keyRingOf(...entries: string[]): EnvKeyRing {
  const parsed = parseKeyRing(entries.join(','));
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.ring;
}

/** A card as the gateway sends it; the mode is the one a key must have to tokenize that number. */
export function aCard(overrides: Partial<CardToTokenize> = {}): CardToTokenize {
  const number = overrides.number ?? '4242424242424242';
  return {
    merchantId: 'merchant_a',
    number,
    holderName: 'Ada Lovelace',
    expiryMonth: 4,
    expiryYear: new Date().getUTCFullYear() + 3,
    cvv: '123',
    mode: isTestCard(number) ? 'test' : 'live',
    ...overrides,
  };
}

/**
 * A Vault on `store` with what the unit tests assume unless they say otherwise: a ring of one fresh
 * key `k1` (so two vaults built without a ring cannot read each other's records), CVVs kept an
 * hour, cards kept 30 days past their expiry month.
 */
export function aVault(options: Partial<VaultOptions> & Pick<VaultOptions, 'store'>): Vault {
  return new Vault({
    cvvTtlSeconds: 3600,
    cardGraceDays: 30,
    ...options,
    keyRing: options.keyRing ?? keyRingOf(keyRingEntry('k1')),
  });
}

const silentLogger = createLogger('vault-test', 'silent');

/**
 * A card store on the test file's private redis-server (from useRedisServer), emptied first and
 * ready for commands; the caller closes it. Each test owns that whole server, never the machine's Redis.
 */
export async function anEmptyRedisCardStore(db: { server: RedisServerHandle; client: Redis }): Promise<RedisCardStore> {
  await db.client.flushdb();
  const store = RedisCardStore.connect(db.server.url, { commandTimeoutMs: 1000, logger: silentLogger });
  await store.waitUntilReady(3000);
  return store;
}

/** The code of the TesseraError `promise` rejects with; anything else (or no rejection) fails the test. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof TesseraError)) throw new Error(`expected a TesseraError, got ${String(err)}`);
  return err.code;
}

/**
 * A stored record as its fields: a JSON record as stored (`v` included), a format-6 card decoded
 * or CVV decoded to the same shape with `v: 6` (its envelope's fields base64, as in JSON).
 */
export async function readRecord(client: Redis, key: string): Promise<Record<string, unknown>> {
  const raw = await client.getBuffer(key);
  if (raw === null) throw new Error(`no record at ${key}`);
  if (isCompactRecord(raw) && key.startsWith(CVV_KEY_PREFIX)) {
    const { compact: _compact, ...fields } = parseCompactCvv(raw);
    return { v: COMPACT_RECORD_VERSION, ...fields };
  }
  if (isCompactRecord(raw)) {
    const { metadataBound: _bound, compact: _compact, ...fields } = parseCompactCard(raw);
    return { v: COMPACT_RECORD_VERSION, ...fields };
  }
  return JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
}

/**
 * Rewrites a stored record in Redis as an insider with write access could, keeping its TTL. A
 * record edited with `v: 6` is written back in format 6 (canonical bytes for the edited fields),
 * any other as JSON: so editing a format-6 card's `v` presents it as an older record.
 */
export async function editRecord(
  client: Redis,
  key: string,
  edit: (record: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  const edited = edit(await readRecord(client, key));
  const { v, ...fields } = edited;
  const compact = (): Buffer =>
    key.startsWith(CVV_KEY_PREFIX)
      ? serializeCompactCvv({ ...(fields as unknown as StoredCvv), compact: true })
      : serializeCompactCard({ ...(fields as unknown as StoredCard), metadataBound: true, compact: true });
  const stored = v === COMPACT_RECORD_VERSION ? compact() : JSON.stringify(edited);
  await client.set(key, stored, 'KEEPTTL');
}

export interface JumpingClock {
  /** For the Vault's `now` option. */
  now(): Date;
  /** Moves the vault's time and the Redis keys' TTLs `ms` ahead together. */
  advance(ms: number): Promise<void>;
  /** advance() to the instant `at` (ms since the epoch). */
  advanceTo(at: number): Promise<void>;
}

/**
 * A clock shared by a Vault and the test's private Redis: the vault reads real time plus every
 * jump so far, and each jump brings every key's TTL that much closer to expiry (a key whose time
 * is up is deleted), as if that time had passed for Redis too. Both keep running in real time, so
 * a test that looks just before a deadline leaves room for the milliseconds the calls take.
 */
export function aJumpingClock(client: Redis, startAt: number = Date.now()): JumpingClock {
  let offset = startAt - Date.now();
  const current = (): number => Date.now() + offset;
  const advance = async (ms: number): Promise<void> => {
    offset += ms;
    for (const key of await client.keys('*')) {
      const left = await client.pttl(key);
      // -1: no TTL, -2: already gone.
      if (left < 0) continue;
      if (left <= ms) await client.del(key);
      else await client.pexpire(key, left - ms);
    }
  };
  return { now: () => new Date(current()), advance, advanceTo: (at) => advance(at - current()) };
}

/** The card and CVV-side keys (CVVs and used-CVV marks) in the test's Redis: what a store holds per token. */
export async function cardAndCvvKeyCount(client: Redis): Promise<number> {
  const [cards, cvvs] = await Promise.all([client.keys(`${CARD_KEY_PREFIX}*`), client.keys(`${CVV_KEY_PREFIX}*`)]);
  return cards.length + cvvs.length;
}
