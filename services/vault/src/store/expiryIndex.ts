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
/** The card expiry index of earlier builds (one sorted set of every retained token), never read: the sweep unlinks it once. */
export const LEGACY_CARD_EXPIRY_INDEX = 'tessera:card:expiry-index';

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
  dropCardIndexes(): Promise<void>;
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

  async dropCardIndexes(): Promise<void> {
    await this.redis.unlink(LEGACY_CARD_EXPIRY_INDEX);
  }
}
