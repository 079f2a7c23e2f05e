import type { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';

/** What the store holds per scope: a claim while the first request runs, then its sealed answer. */
export type IdempotencyRecord = { state: 'in_progress'; fingerprint: string } | { state: 'done'; fingerprint: string; sealed: string };

export interface IdempotencyStore {
  /**
   * Claims the scope atomically (SET NX) for `lockTtlMs`, or returns what is already there.
   * Exactly one of several concurrent callers gets 'claimed'.
   */
  claim(scope: string, fingerprint: string, lockTtlMs: number): Promise<'claimed' | IdempotencyRecord>;
  /** Replaces the claim with the answer, kept for ttlMs. */
  complete(scope: string, fingerprint: string, sealed: string, ttlMs: number): Promise<void>;
  /** Drops the claim (the request did nothing; a retry may run it). */
  release(scope: string): Promise<void>;
  close?(): Promise<void>;
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

  claim(scope: string, fingerprint: string, lockTtlMs: number): Promise<'claimed' | IdempotencyRecord> {
    const existing = this.live(scope);
    if (existing) return Promise.resolve(existing);
    // Expired entries would otherwise pile up in a long-running development process.
    if (this.records.size > 10_000) for (const key of [...this.records.keys()]) this.live(key);
    this.records.set(scope, { record: { state: 'in_progress', fingerprint }, expiresAt: this.now() + lockTtlMs });
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

/** `tessera:idempotency:<merchant>:<sha256 of the key>` -> JSON record, with a PX expiry. */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(private readonly redis: Redis) {}

  async claim(scope: string, fingerprint: string, lockTtlMs: number): Promise<'claimed' | IdempotencyRecord> {
    try {
      const claim: IdempotencyRecord = { state: 'in_progress', fingerprint };
      for (let attempt = 0; attempt < 3; attempt++) {
        const set = await this.redis.set(PREFIX + scope, JSON.stringify(claim), 'PX', lockTtlMs, 'NX');
        if (set === 'OK') return 'claimed';
        const raw = await this.redis.get(PREFIX + scope);
        // Expired between the SET and the GET: claim again.
        if (raw !== null) return JSON.parse(raw) as IdempotencyRecord;
      }
      throw new Error('idempotency record kept vanishing');
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
