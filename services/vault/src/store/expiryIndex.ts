import type { Redis } from 'ioredis';
import { defineScripts } from '@tessera/common/redis';

/**
 * What the cvv.expired_unused sweep reads instead of keyspace notifications: tokens by their CVV's
 * deadline. Token ids only (no card data, no merchant); an entry costs only while its CVV lives. The
 * cards need no index: the token.expiring_soon sweep reads the card records themselves (app/eventSweeps.ts).
 * Under `tessera:card:` but not `tessera:card:{`, so the vault's Redis user covers it and the card
 * SCAN never takes it for a token.
 */
export const CVV_EXPIRY_INDEX = 'tessera:card:cvv-expiry-index';
/**
 * The card expiry indexes of earlier builds, never read: the sweep unlinks them once (dropCardIndexes).
 * One sorted set of every retained token, then one plain set per expiry month.
 */
export const LEGACY_CARD_EXPIRY_INDEX = 'tessera:card:expiry-index';
export const LEGACY_CARD_EXPIRY_MONTH_PREFIX = 'tessera:card:expiry-month:';
/** A month's set expired on its own this long after the month's end: older months are gone already. */
const LEGACY_MONTH_HORIZON_MS = 400 * 86_400_000;
/** The last expiry year a card may have (domain/card.ts): a month set could exist up to it. */
const LAST_EXPIRY_YEAR = 9999;
const UNLINKS_PER_ROUND = 1000;

export interface CardMonth {
  expiryMonth: number;
  expiryYear: number;
}

export function legacyCardExpiryMonthKey({ expiryMonth, expiryYear }: CardMonth): string {
  return `${LEGACY_CARD_EXPIRY_MONTH_PREFIX}${expiryYear}-${String(expiryMonth).padStart(2, '0')}`;
}

interface IndexCommands {
  /** KEYS[1] index; ARGV: member, score. Removes the member only if its score is still that one. */
  tesseraZremIfScore(key: string, member: string, score: number): Promise<number>;
}

const ZREM_IF_SCORE = `
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '-1') == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0`;

export interface ExpiryIndex {
  /** `onlyIfIndexed`: a new deadline for a CVV already listed (retain), never a new entry. */
  noteCvv(token: string, expiresAtMs: number, onlyIfIndexed?: boolean): Promise<void>;
  forgetCvv(token: string): Promise<void>;
  /** Tokens whose CVV's deadline is at most `nowMs`, with that deadline. */
  cvvsDueBy(nowMs: number, count: number): Promise<Array<{ token: string; expiresAtMs: number }>>;
  /** Drops a CVV entry the sweep handled, unless a new CVV moved its deadline meanwhile. */
  forgetCvvAt(token: string, expiresAtMs: number): Promise<void>;
  /** Unlinks the card expiry indexes of earlier builds (every month set that can still exist). */
  dropCardIndexes(nowMs: number): Promise<void>;
}

export class RedisExpiryIndex implements ExpiryIndex {
  private readonly commands: IndexCommands;

  constructor(private readonly redis: Redis) {
    this.commands = defineScripts<IndexCommands>(redis, { tesseraZremIfScore: { numberOfKeys: 1, lua: ZREM_IF_SCORE } });
  }

  async noteCvv(token: string, expiresAtMs: number, onlyIfIndexed = false): Promise<void> {
    if (onlyIfIndexed) await this.redis.zadd(CVV_EXPIRY_INDEX, 'XX', expiresAtMs, token);
    else await this.redis.zadd(CVV_EXPIRY_INDEX, expiresAtMs, token);
  }

  async forgetCvv(token: string): Promise<void> {
    await this.redis.zrem(CVV_EXPIRY_INDEX, token);
  }

  async cvvsDueBy(nowMs: number, count: number): Promise<Array<{ token: string; expiresAtMs: number }>> {
    const flat = await this.redis.zrangebyscore(CVV_EXPIRY_INDEX, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, count);
    const due: Array<{ token: string; expiresAtMs: number }> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) due.push({ token: flat[i] as string, expiresAtMs: Number(flat[i + 1]) });
    return due;
  }

  async forgetCvvAt(token: string, expiresAtMs: number): Promise<void> {
    await this.commands.tesseraZremIfScore(CVV_EXPIRY_INDEX, token, expiresAtMs);
  }

  /**
   * The month sets are named, not SCANned for: every month from the oldest that has not expired on
   * its own to the last a card may have, about 96,000 single-key UNLINKs (each its own slot in a
   * Cluster), a thousand per round trip, once.
   */
  async dropCardIndexes(nowMs: number): Promise<void> {
    await this.redis.unlink(LEGACY_CARD_EXPIRY_INDEX);
    const oldest = new Date(nowMs - LEGACY_MONTH_HORIZON_MS - 31 * 86_400_000);
    let keys: string[] = [];
    for (let m = oldest.getUTCFullYear() * 12 + oldest.getUTCMonth(); m < (LAST_EXPIRY_YEAR + 1) * 12; m++) {
      keys.push(legacyCardExpiryMonthKey({ expiryYear: Math.floor(m / 12), expiryMonth: (m % 12) + 1 }));
      if (keys.length === UNLINKS_PER_ROUND) {
        await Promise.all(keys.map((key) => this.redis.unlink(key)));
        keys = [];
      }
    }
    await Promise.all(keys.map((key) => this.redis.unlink(key)));
  }
}
