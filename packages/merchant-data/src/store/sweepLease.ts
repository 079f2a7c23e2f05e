import crypto from 'node:crypto';
import type { Redis } from 'ioredis';

export interface SweepLease {
  /** True when this holder took the lease named `name` for `ttlMs` (nobody held it). */
  take(name: string, ttlMs: number): Promise<boolean>;
}

/**
 * A sweep runs on every replica's timer but once across them per interval: the first replica to
 * take the lease (SET NX PX) runs it; the lease is not given back, so the others skip until it
 * lapses. Events stay once per object through RedisEventStore.recordOnce even if two sweeps overlap.
 */
export class RedisSweepLease implements SweepLease {
  private readonly holder = crypto.randomBytes(8).toString('hex');

  constructor(private readonly redis: Redis) {}

  async take(name: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`tessera:events:sweep-lease:${name}`, this.holder, 'PX', Math.max(1, ttlMs), 'NX')) === 'OK';
  }
}
