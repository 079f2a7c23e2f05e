import ipaddr from 'ipaddr.js';
import { TesseraError } from '@tessera/common';
import { merchantSlot } from '@tessera/merchant-data';

/** Retry-After in whole seconds (RFC 9110 §10.2.3): rounded up, and never 0, which would invite an instant retry. */
export function retryAfterSeconds(resetInMs: number): number {
  return Math.max(1, Math.ceil(resetInMs / 1000));
}

/** A limit's answer: a 429 that carries its wait, which the envelope sends as Retry-After. */
export interface RateLimitRefusal extends TesseraError {
  readonly retryAfterSeconds: number;
}

/** A limit's 429 (`rate_limited`, or `challenge_required` for a proof of work) with its message and wait. */
export function limitRefusal(code: 'rate_limited' | 'challenge_required', message: string, seconds: number): RateLimitRefusal {
  return new TesseraError(code, { message, retryAfterSeconds: seconds }) as RateLimitRefusal;
}

/** A rate_limited refusal whose message and Retry-After name the same wait: `why` (a sentence), then when to try again. */
export function rateLimitRefusal(why: string, resetInMs: number): RateLimitRefusal {
  const seconds = retryAfterSeconds(resetInMs);
  return limitRefusal('rate_limited', `${why} Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`, seconds);
}

/**
 * Per-key bucket; the key id, never the key or its digest. In its merchant's slot, where the key
 * lookup script counts it along with reading the key (merchant-data's domain/slots.ts).
 */
export function apiKeyBucket(key: { merchantId: string; id: string }): string {
  return `key:${merchantSlot(key.merchantId)}:${key.id}`;
}

/**
 * Failed-authentication bucket of a client address. An IPv6 client usually controls a whole /64,
 * so counting single IPv6 addresses would let it rotate through 2^64 fresh buckets; the /64 is
 * the unit. Requests whose address is unknown share one bucket.
 */
export function failedAuthBucket(clientIp: string | undefined): string {
  return `authfail:${clientNetworkOf(clientIp)}`;
}

/** The unit a client address is counted by: the IPv4 address, the IPv6 /64, or `unknown`. */
export function clientNetworkOf(clientIp: string | undefined): string {
  if (clientIp === undefined || !ipaddr.isValid(clientIp)) return 'unknown';
  const addr = ipaddr.process(clientIp);
  if (addr.kind() === 'ipv4') return addr.toString();
  const prefix = (addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${prefix.join(':')}::/64`;
}

/** A fixed-window limit is exceeded once the window has counted more than `limit` hits. */
export function isOverLimit(count: number, limit: number): boolean {
  return limit > 0 && count > limit;
}
