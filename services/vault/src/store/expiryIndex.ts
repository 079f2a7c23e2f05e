import type { Redis } from 'ioredis';
import { defineScripts } from '@tessera/common/redis';

/**
 * What the events sweeps (token.expiring_soon, cvv.expired_unused) read instead of keyspace
 * notifications: tokens by the end of their card's expiry month, and tokens by their CVV's
 * deadline. Sorted sets of token ids only (no card data, no merchant); the sweep reads the
 * card record's clear fields for the rest. Under `tessera:card:` but not `tessera:card:{`, so the
 * vault's Redis user covers them and the card SCAN (rewrap) never takes them for a token.
 */
export const CARD_EXPIRY_INDEX = 'tessera:card:expiry-index';
export const CVV_EXPIRY_INDEX = 'tessera:card:cvv-expiry-index';
/** Entries this long past their card's expiry are dropped (the card itself is gone by then, grace included). */
const CARD_INDEX_HORIZON_MS = 400 * 86_400_000;

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
  noteCard(token: string, monthEndsAtMs: number): Promise<void>;
  /** noteCard for a batch of saved cards, in one command. */
  noteCards(cards: ReadonlyArray<{ token: string; monthEndsAtMs: number }>): Promise<void>;
  /** `onlyIfIndexed`: a new deadline for a CVV already listed (retain), never a new entry. */
  noteCvv(token: string, expiresAtMs: number, onlyIfIndexed?: boolean): Promise<void>;
  forgetCvv(token: string): Promise<void>;
  forget(token: string): Promise<void>;
  /** Tokens whose card's month ends in (fromMs, toMs], oldest first, after `offset`. */
  cardsEndingBetween(fromMs: number, toMs: number, offset: number, count: number): Promise<string[]>;
  /** Tokens whose CVV's deadline is at most `nowMs`, with that deadline. */
  cvvsDueBy(nowMs: number, count: number): Promise<Array<{ token: string; expiresAtMs: number }>>;
  /** Drops a CVV entry the sweep handled, unless a new CVV moved its deadline meanwhile. */
  forgetCvvAt(token: string, expiresAtMs: number): Promise<void>;
  pruneCards(nowMs: number): Promise<void>;
}

export class RedisExpiryIndex implements ExpiryIndex {
  private readonly commands: IndexCommands;

  constructor(private readonly redis: Redis) {
    this.commands = defineScripts<IndexCommands>(redis, { tesseraZremIfScore: { numberOfKeys: 1, lua: ZREM_IF_SCORE } });
  }

  async noteCard(token: string, monthEndsAtMs: number): Promise<void> {
    await this.redis.zadd(CARD_EXPIRY_INDEX, monthEndsAtMs, token);
  }

  async noteCards(cards: ReadonlyArray<{ token: string; monthEndsAtMs: number }>): Promise<void> {
    if (cards.length === 0) return;
    await this.redis.zadd(CARD_EXPIRY_INDEX, ...cards.flatMap(({ token, monthEndsAtMs }) => [monthEndsAtMs, token]));
  }

  async noteCvv(token: string, expiresAtMs: number, onlyIfIndexed = false): Promise<void> {
    if (onlyIfIndexed) await this.redis.zadd(CVV_EXPIRY_INDEX, 'XX', expiresAtMs, token);
    else await this.redis.zadd(CVV_EXPIRY_INDEX, expiresAtMs, token);
  }

  async forgetCvv(token: string): Promise<void> {
    await this.redis.zrem(CVV_EXPIRY_INDEX, token);
  }

  async forget(token: string): Promise<void> {
    await Promise.all([this.redis.zrem(CARD_EXPIRY_INDEX, token), this.redis.zrem(CVV_EXPIRY_INDEX, token)]);
  }

  async cardsEndingBetween(fromMs: number, toMs: number, offset: number, count: number): Promise<string[]> {
    return this.redis.zrangebyscore(CARD_EXPIRY_INDEX, `(${fromMs}`, toMs, 'LIMIT', offset, count);
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

  async pruneCards(nowMs: number): Promise<void> {
    await this.redis.zremrangebyscore(CARD_EXPIRY_INDEX, '-inf', nowMs - CARD_INDEX_HORIZON_MS);
  }
}
