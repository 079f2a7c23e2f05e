import type { Redis } from 'ioredis';
import { expiryMonthEnd } from '@tessera/common';
import { defineScripts } from '@tessera/common/redis';

/**
 * What the events sweeps (token.expiring_soon, cvv.expired_unused) read instead of keyspace
 * notifications: tokens by their card's expiry month, and tokens by their CVV's deadline. Token
 * ids only (no card data, no merchant); the sweep reads the card record's clear fields for the
 * rest. Under `tessera:card:` but not `tessera:card:{`, so the vault's Redis user covers them and
 * the card SCAN (rewrap) never takes them for a token.
 *
 * Cards: one plain set per expiry month, `tessera:card:expiry-month:<YYYY-MM>`, expiring on its own
 * CARD_INDEX_HORIZON_MS after the month's end. A token costs a set member (about 90 B of Redis
 * memory at 100,000 cards, docs/PERFORMANCE.md) where the single sorted set it replaces cost about
 * 145 B (a skiplist node and a dict entry per token), and nothing needs pruning. A card whose expiry
 * changed stays in its old month's set too: the sweep checks the card's own month.
 */
export const CARD_EXPIRY_MONTH_PREFIX = 'tessera:card:expiry-month:';
/**
 * The cards' sorted set before the month sets (score: the month's end). Still read by the sweep,
 * and emptied into the month sets by it (pruneCards), so a vault upgraded in place keeps telling
 * every card's expiry.
 */
export const LEGACY_CARD_EXPIRY_INDEX = 'tessera:card:expiry-index';
export const CVV_EXPIRY_INDEX = 'tessera:card:cvv-expiry-index';
/** A month's set lives this long past the month's end (the cards themselves are gone by then, grace included). */
const CARD_INDEX_HORIZON_MS = 400 * 86_400_000;
/** Legacy entries moved per batch, and at most this many batches per sweep (the rest wait for the next). */
const LEGACY_BATCH = 1000;
const LEGACY_BATCHES_PER_SWEEP = 100;

export interface CardMonth {
  expiryMonth: number;
  expiryYear: number;
}

export function cardExpiryMonthKey({ expiryMonth, expiryYear }: CardMonth): string {
  return `${CARD_EXPIRY_MONTH_PREFIX}${expiryYear}-${String(expiryMonth).padStart(2, '0')}`;
}

/** A token listed for a card month; `month` is undefined for an entry of the legacy sorted set. */
export interface IndexedCard {
  token: string;
  month: CardMonth | undefined;
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
  noteCard(token: string, month: CardMonth): Promise<void>;
  /** noteCard for a batch of saved cards, in one command per month. */
  noteCards(cards: ReadonlyArray<{ token: string; month: CardMonth }>): Promise<void>;
  /** `onlyIfIndexed`: a new deadline for a CVV already listed (retain), never a new entry. */
  noteCvv(token: string, expiresAtMs: number, onlyIfIndexed?: boolean): Promise<void>;
  forgetCvv(token: string): Promise<void>;
  /** The token's entries; its card's month entry only when the month is given. */
  forget(token: string, month?: CardMonth): Promise<void>;
  /** Batches of at most `count` tokens whose card's month ends in (fromMs, toMs]; a token may come twice. */
  cardsEndingBetween(fromMs: number, toMs: number, count: number): AsyncIterable<IndexedCard[]>;
  /** Tokens whose CVV's deadline is at most `nowMs`, with that deadline. */
  cvvsDueBy(nowMs: number, count: number): Promise<Array<{ token: string; expiresAtMs: number }>>;
  /** Drops a CVV entry the sweep handled, unless a new CVV moved its deadline meanwhile. */
  forgetCvvAt(token: string, expiresAtMs: number): Promise<void>;
  /** Drops the legacy entries past the horizon and moves the others into the month sets. */
  pruneCards(nowMs: number): Promise<void>;
}

export class RedisExpiryIndex implements ExpiryIndex {
  private readonly commands: IndexCommands;

  constructor(private readonly redis: Redis) {
    this.commands = defineScripts<IndexCommands>(redis, { tesseraZremIfScore: { numberOfKeys: 1, lua: ZREM_IF_SCORE } });
  }

  async noteCard(token: string, month: CardMonth): Promise<void> {
    await this.noteCards([{ token, month }]);
  }

  /** SADD and its key's PEXPIREAT per month, sent together (auto-pipelined; each its own slot in a Cluster). */
  async noteCards(cards: ReadonlyArray<{ token: string; month: CardMonth }>): Promise<void> {
    const byMonth = new Map<string, { month: CardMonth; tokens: string[] }>();
    for (const { token, month } of cards) {
      const key = cardExpiryMonthKey(month);
      const entry = byMonth.get(key) ?? { month, tokens: [] };
      entry.tokens.push(token);
      byMonth.set(key, entry);
    }
    await Promise.all(
      [...byMonth].flatMap(([key, { month, tokens }]) => [
        this.redis.sadd(key, ...tokens),
        this.redis.pexpireat(key, expiryMonthEnd(month.expiryMonth, month.expiryYear).getTime() + CARD_INDEX_HORIZON_MS),
      ]),
    );
  }

  async noteCvv(token: string, expiresAtMs: number, onlyIfIndexed = false): Promise<void> {
    if (onlyIfIndexed) await this.redis.zadd(CVV_EXPIRY_INDEX, 'XX', expiresAtMs, token);
    else await this.redis.zadd(CVV_EXPIRY_INDEX, expiresAtMs, token);
  }

  async forgetCvv(token: string): Promise<void> {
    await this.redis.zrem(CVV_EXPIRY_INDEX, token);
  }

  async forget(token: string, month?: CardMonth): Promise<void> {
    await Promise.all([
      this.redis.zrem(LEGACY_CARD_EXPIRY_INDEX, token),
      this.redis.zrem(CVV_EXPIRY_INDEX, token),
      ...(month !== undefined ? [this.redis.srem(cardExpiryMonthKey(month), token)] : []),
    ]);
  }

  async *cardsEndingBetween(fromMs: number, toMs: number, count: number): AsyncIterable<IndexedCard[]> {
    for (let offset = 0; ; offset += count) {
      const tokens = await this.redis.zrangebyscore(LEGACY_CARD_EXPIRY_INDEX, `(${fromMs}`, toMs, 'LIMIT', offset, count);
      if (tokens.length > 0) yield tokens.map((token) => ({ token, month: undefined }));
      if (tokens.length < count) break;
    }
    for (const month of monthsEndingBetween(fromMs, toMs)) {
      let cursor = '0';
      do {
        const [next, tokens] = await this.redis.sscan(cardExpiryMonthKey(month), cursor, 'COUNT', count);
        if (tokens.length > 0) yield tokens.map((token) => ({ token, month }));
        cursor = next;
      } while (cursor !== '0');
    }
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
   * Each legacy entry is added to its month's set before it leaves the sorted set, so a sweep that
   * runs meanwhile finds it in one or the other (or both: the event's once-mark tells it once).
   */
  async pruneCards(nowMs: number): Promise<void> {
    await this.redis.zremrangebyscore(LEGACY_CARD_EXPIRY_INDEX, '-inf', nowMs - CARD_INDEX_HORIZON_MS);
    for (let batch = 0; batch < LEGACY_BATCHES_PER_SWEEP; batch++) {
      const flat = await this.redis.zrange(LEGACY_CARD_EXPIRY_INDEX, 0, LEGACY_BATCH - 1, 'WITHSCORES');
      if (flat.length === 0) return;
      const cards: Array<{ token: string; month: CardMonth }> = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const month = monthEndingAt(Number(flat[i + 1]));
        if (month !== undefined) cards.push({ token: flat[i] as string, month });
      }
      await this.noteCards(cards);
      await this.redis.zrem(LEGACY_CARD_EXPIRY_INDEX, ...flat.filter((_, i) => i % 2 === 0));
    }
  }
}

/** The card months whose end (expiryMonthEnd) falls in (fromMs, toMs]. */
export function monthsEndingBetween(fromMs: number, toMs: number): CardMonth[] {
  const months: CardMonth[] = [];
  // A month ends on the next month's first day (expiryMonthEnd): start a month early.
  const start = new Date(fromMs);
  for (let m = start.getUTCMonth() - 1; ; m++) {
    const month = { expiryYear: start.getUTCFullYear() + Math.floor(m / 12), expiryMonth: (((m % 12) + 12) % 12) + 1 };
    const end = expiryMonthEnd(month.expiryMonth, month.expiryYear).getTime();
    if (end > toMs) return months;
    if (end > fromMs) months.push(month);
  }
}

/** The month a legacy entry's score (its month's end) names; undefined for a score no month ends at. */
function monthEndingAt(monthEndMs: number): CardMonth | undefined {
  // Two days before a month's end is inside that month whatever the time zone rule.
  const inside = new Date(monthEndMs - 2 * 86_400_000);
  const month = { expiryMonth: inside.getUTCMonth() + 1, expiryYear: inside.getUTCFullYear() };
  return expiryMonthEnd(month.expiryMonth, month.expiryYear).getTime() === monthEndMs ? month : undefined;
}
