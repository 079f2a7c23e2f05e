import type { Redis } from 'ioredis';
import { redisUnavailable as unavailable } from '@tessera/common/redis';

/**
 * Requests to move a key to the newest pepper, from a service that may not write the digest index
 * (the fields service) to one that may (the admin service), which checks each before applying it
 * (services/admin/src/app/pepperMoves.ts). A stream both Redis users may write.
 */
export const API_KEY_MOVES = 'tessera:apikey-moves';
/** Requests beyond these are trimmed: a request lost is asked again on the key's next use. */
const MAX_MOVE_REQUESTS = 10_000;

/** Key `keyId`, found by `foundDigest`, asked to move to `currentDigest` under pepper `pepperId`. */
export interface KeyMoveRequest {
  keyId: string;
  foundDigest: string;
  currentDigest: string;
  pepperId: string;
}

export interface ApiKeyMoveRequests {
  request(move: KeyMoveRequest): Promise<void>;
  /**
   * Up to `count` of the oldest requests, each removed for good and given to this caller alone:
   * of several admin replicas only the one whose XDEL removed an entry applies it. A field a
   * request lacks is an empty string.
   */
  take(count: number): Promise<KeyMoveRequest[]>;
}

export class RedisApiKeyMoveRequests implements ApiKeyMoveRequests {
  constructor(private readonly redis: Redis) {}

  async request(move: KeyMoveRequest): Promise<void> {
    try {
      await this.redis.xadd(
        API_KEY_MOVES,
        'MAXLEN',
        '~',
        MAX_MOVE_REQUESTS,
        '*',
        'keyId',
        move.keyId,
        'foundDigest',
        move.foundDigest,
        'currentDigest',
        move.currentDigest,
        'pepperId',
        move.pepperId,
      );
    } catch (err) {
      throw unavailable(err);
    }
  }

  async take(count: number): Promise<KeyMoveRequest[]> {
    try {
      const entries = await this.redis.xrange(API_KEY_MOVES, '-', '+', 'COUNT', count);
      const claimed = await Promise.all(
        entries.map(async ([id, flat]) => ((await this.redis.xdel(API_KEY_MOVES, id)) === 1 ? requestOf(flat) : undefined)),
      );
      return claimed.filter((r): r is KeyMoveRequest => r !== undefined);
    } catch (err) {
      throw unavailable(err);
    }
  }
}

function requestOf(flat: string[]): KeyMoveRequest {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string);
  const field = (name: keyof KeyMoveRequest): string => fields.get(name) ?? '';
  return { keyId: field('keyId'), foundDigest: field('foundDigest'), currentDigest: field('currentDigest'), pepperId: field('pepperId') };
}
