import { Redis, type RedisOptions } from 'ioredis';
import { TesseraError, type Logger } from '@tessera/common';
import type { CardEntryToSave, CardStore, StoreHealth } from './cardStore';
import {
  CARD_KEY_PREFIX,
  cardKey,
  checkpointKey,
  cvvKey,
  parseCard,
  parseCvv,
  recordKey,
  serializeCard,
  serializeCvv,
  tokenOfCardKey,
} from './records';
import type { RecordKind } from '../domain/envelope';
import type { StoredCard, StoredCvv } from '../domain/card';

export interface RedisCardStoreOptions {
  commandTimeoutMs: number;
  logger: Logger;
}

/**
 * Options chosen so a Redis outage fails requests fast (503) instead of queueing them: no offline
 * queue, one retry, a per-command timeout, and reconnection in the background with a capped backoff.
 */
export function redisOptions(commandTimeoutMs: number): RedisOptions {
  return {
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 1000),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
    // Commands issued in the same tick by concurrent requests share one write (and Redis one
    // read); under load this saves syscalls in both processes (see docs/PERFORMANCE.md).
    enableAutoPipelining: true,
  };
}

/** Compare-and-set that keeps the key's TTL (KEEPTTL needs Redis >= 6). */
const REPLACE_IF_UNCHANGED = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0`;

export class RedisCardStore implements CardStore {
  private lastLoggedError: string | undefined;

  /** The URL may hold a password: it is given to ioredis only, never logged. */
  static connect(url: string, opts: RedisCardStoreOptions): RedisCardStore {
    return new RedisCardStore(new Redis(url, redisOptions(opts.commandTimeoutMs)), opts.logger);
  }

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {
    // Without an 'error' listener ioredis would print to stderr; a down Redis must never crash the vault.
    redis.on('error', (err: Error) => {
      if (err.message === this.lastLoggedError) return;
      this.lastLoggedError = err.message;
      this.logger.error({ err, redisStatus: redis.status }, 'redis connection error');
    });
    redis.on('ready', () => {
      this.lastLoggedError = undefined;
      this.logger.info('redis connected');
    });
    redis.on('end', () => this.logger.info('redis connection closed'));
  }

  /** Resolves true once Redis is ready, false after timeoutMs; the vault starts either way. */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      this.redis.once('ready', onReady);
    });
  }

  async save(entry: CardEntryToSave): Promise<void> {
    await this.run(async () => {
      const tx = this.redis.multi().set(cardKey(entry.token), serializeCard(entry.card), 'PX', Math.ceil(entry.cardTtlMs));
      if (entry.cvv !== undefined) {
        tx.set(cvvKey(entry.token), serializeCvv(entry.cvv.record), 'PX', Math.ceil(entry.cvv.ttlMs));
      } else {
        tx.del(cvvKey(entry.token));
      }
      const results = await tx.exec();
      if (results === null) throw new Error('redis transaction was aborted');
      for (const [err] of results) if (err) throw err;
    });
  }

  async getCard(token: string): Promise<StoredCard | null> {
    const raw = await this.run(() => this.redis.get(cardKey(token)));
    return raw === null ? null : parseCard(raw);
  }

  async getCvv(token: string): Promise<StoredCvv | null> {
    const raw = await this.run(() => this.redis.get(cvvKey(token)));
    return raw === null ? null : parseCvv(raw);
  }

  async takeCvv(token: string): Promise<StoredCvv | null> {
    const raw = await this.run(() => this.redis.getdel(cvvKey(token)));
    return raw === null ? null : parseCvv(raw);
  }

  async hasCvv(token: string): Promise<boolean> {
    return (await this.run(() => this.redis.exists(cvvKey(token)))) > 0;
  }

  async delete(token: string): Promise<boolean> {
    const results = await this.run(async () => {
      const res = await this.redis.multi().del(cardKey(token)).del(cvvKey(token)).exec();
      if (res === null) throw new Error('redis transaction was aborted');
      for (const [err] of res) if (err) throw err;
      return res;
    });
    return results[0]?.[1] === 1;
  }

  async scanTokens(cursor: string, count: number): Promise<{ cursor: string; tokens: string[] }> {
    const [next, keys] = await this.run(() => this.redis.scan(cursor, 'MATCH', `${CARD_KEY_PREFIX}*`, 'COUNT', count));
    const tokens = keys.map(tokenOfCardKey).filter((t): t is string => t !== undefined);
    return { cursor: next, tokens };
  }

  async readRaw(kind: RecordKind, token: string): Promise<string | null> {
    return this.run(() => this.redis.get(recordKey(kind, token)));
  }

  async replaceRaw(kind: RecordKind, token: string, expected: string, next: string): Promise<boolean> {
    const replaced = await this.run(() => this.redis.eval(REPLACE_IF_UNCHANGED, 1, recordKey(kind, token), expected, next));
    return replaced === 1;
  }

  async getCheckpoint(name: string): Promise<string | null> {
    return this.run(() => this.redis.get(checkpointKey(name)));
  }

  async setCheckpoint(name: string, value: string | null): Promise<void> {
    await this.run(async () => {
      if (value === null) await this.redis.del(checkpointKey(name));
      else await this.redis.set(checkpointKey(name), value);
    });
  }

  async ping(): Promise<StoreHealth> {
    try {
      await this.redis.ping();
      return { ok: true, detail: 'redis ok' };
    } catch {
      return { ok: false, detail: `redis unavailable (connection ${this.redis.status})` };
    }
  }

  /** QUIT lets pending replies arrive; when not connected, stop reconnecting at once instead. */
  async close(): Promise<void> {
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit();
        return;
      } catch {
        // fall through to a hard disconnect
      }
    }
    this.redis.disconnect();
  }

  private async run<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      throw new TesseraError('service_unavailable', { message: 'The card store is temporarily unavailable.', cause: err });
    }
  }
}
