import crypto from 'node:crypto';
import { mayHoldCardNumber } from '@tessera/common';

/**
 * Idempotency-Key on POST /v1/token and POST /v1/proxy: the first complete answer for a merchant's
 * key is kept (IDEMPOTENCY_TTL_SECONDS, 24 h by default) and replayed for a retry with the same
 * body; a different body under the same key is 409 idempotency_key_reused; a retry that arrives
 * while the first request is still running is 409 idempotency_in_progress (no waiting: the first
 * may take a whole PSP timeout, and a prompt, retryable answer is easier to handle than a hang).
 */

/** Printable ASCII without spaces at the ends, as Stripe and the IETF draft use; at most 255. */
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

export function isValidIdempotencyKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

export type KeyMode = 'test' | 'live';

/**
 * Where a merchant's key lives, per mode: a live key never sees what a test key stored under the
 * same Idempotency-Key (test and live never meet). The key is hashed so whatever a merchant puts
 * in it (order ids, emails) never becomes part of a store key. Live scopes keep the layout they
 * had before modes were part of it, so an upgrade loses no live answer (a retry across the deploy
 * still replays instead of charging again); merchant ids hold no ':' so the two cannot collide.
 */
export function idempotencyScope(merchantId: string, mode: KeyMode, idempotencyKey: string): string {
  const digest = crypto.createHash('sha256').update(idempotencyKey).digest('base64url');
  return mode === 'live' ? `${merchantId}:${digest}` : `${merchantId}:${mode}:${digest}`;
}

/** Whose share of the store a record counts against: each merchant's test and live keys apart. */
export function quotaOwner(merchantId: string, mode: KeyMode): string {
  return `${merchantId}:${mode}`;
}

/** Slices of the replay window in which bytes stored per merchant are counted. */
export const USAGE_SLICES = 24;

/**
 * Bytes a merchant holds are counted per slice of the replay window (an hour of the default 24 h)
 * rather than per record, so a quota check is one read of USAGE_SLICES + 1 counters: a record
 * written in slice `b` is gone by the end of slice `b` plus the TTL, so the counters of the
 * current slice and the USAGE_SLICES before it cover every record still held (an upper bound:
 * a record dropped early still counts until its slice expires).
 */
export interface UsageWindow {
  sliceMs: number;
  /** The slice a record written now is counted in. */
  current: number;
  /** The slices whose counters may still count live records, newest first. */
  counted: number[];
  /** When the current slice's counter may be dropped (all its records have expired). */
  currentExpiresAt: number;
  /** When the current slice ends: the soonest an over-quota merchant's usage can shrink. */
  currentEndsAt: number;
}

export function usageWindow(now: number, ttlMs: number): UsageWindow {
  const sliceMs = Math.max(1_000, Math.ceil(ttlMs / USAGE_SLICES));
  const current = Math.floor(now / sliceMs);
  return {
    sliceMs,
    current,
    counted: Array.from({ length: USAGE_SLICES + 1 }, (_, i) => current - i),
    currentExpiresAt: (current + 1) * sliceMs + ttlMs,
    currentEndsAt: (current + 1) * sliceMs,
  };
}

/** What a kept answer weighs against IDEMPOTENCY_MAX_STORED_BYTES: its body and header bytes. */
export function answerBytes(headers: ReadonlyArray<[string, string | string[]]>, bodyBytes: number): number {
  let total = bodyBytes;
  for (const [name, value] of headers) {
    total += name.length;
    for (const v of Array.isArray(value) ? value : [value]) total += Buffer.byteLength(v);
  }
  return total;
}

/**
 * Identifies "the same request": route and body. Keyed (HMAC with a secret derived from the
 * pepper) because a tokenize body holds the PAN: an unkeyed hash of it is cardholder data by
 * PCI DSS 3.5.1.1, and a guessable one.
 */
export function requestFingerprint(secret: Buffer, route: string, body: unknown): string {
  return crypto
    .createHmac('sha256', secret)
    .update(route)
    .update('\n')
    .update(JSON.stringify(body ?? null))
    .digest('base64url');
}

export interface StoredResponse {
  status: number;
  headers: Array<[string, string | string[]]>;
  body: Buffer;
}

/**
 * Which answers are kept and replayed. Everything that says what happened is: successes, PSP
 * answers of any status, client errors, PSP or internal timeouts and 502 psp_outcome_unknown
 * (the PSP may have received the request, so a retry must not send it again). Only answers that
 * say "nothing was done, try again" release the key: 503 and 429. The gateway answers 503 to a
 * proxy call only when it is provable that nothing left for the PSP (see upstreams.ts).
 */
export function isReplayable(status: number): boolean {
  return status !== 503 && status !== 429;
}

/** Headers that describe this delivery, not the answer: never replayed (`connection: close` is a drain's). */
const PER_DELIVERY_HEADERS = new Set([
  'x-request-id',
  'x-tessera-request-id',
  'x-tessera-total-ms',
  'date',
  'retry-after',
  'connection',
  'keep-alive',
]);

export function replayableHeaders(headers: Record<string, number | string | string[] | undefined>): Array<[string, string | string[]]> {
  const kept: Array<[string, string | string[]]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || PER_DELIVERY_HEADERS.has(name.toLowerCase())) continue;
    kept.push([name, typeof value === 'number' ? String(value) : value]);
  }
  return kept;
}

/**
 * A stored answer is encrypted (AES-256-GCM, key derived from the pepper): a PSP's response is
 * passed through unchanged and could echo card data, which must not sit in Redis in clear.
 * The scope is bound in as additional data, so a record cannot be moved to another key.
 */
export function sealResponse(key: Buffer, scope: string, response: StoredResponse): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(scope));
  const plain = Buffer.from(JSON.stringify({ s: response.status, h: response.headers, b: response.body.toString('base64') }));
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  return [iv, cipher.getAuthTag(), sealed].map((b) => b.toString('base64')).join('.');
}

export function openResponse(key: Buffer, scope: string, sealed: string): StoredResponse {
  const [iv, tag, data] = sealed.split('.').map((part) => Buffer.from(part, 'base64'));
  if (!iv || !tag || !data) throw new Error('malformed stored response');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(scope));
  decipher.setAuthTag(tag);
  const plain = JSON.parse(Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8')) as {
    s: number;
    h: Array<[string, string | string[]]>;
    b: string;
  };
  return { status: plain.s, headers: plain.h, body: Buffer.from(plain.b, 'base64') };
}

/** Two independent keys from the pepper: one for fingerprints, one for sealing answers. */
export function idempotencyKeys(pepper: string): { fingerprint: Buffer; seal: Buffer } {
  const derive = (info: string) => Buffer.from(crypto.hkdfSync('sha256', pepper, 'tessera.idempotency', info, 32));
  return { fingerprint: derive('fingerprint'), seal: derive('seal') };
}

/**
 * The Idempotency-Key as idempotencyScope should see it. A key that could be a card number is
 * replaced by a keyed hash of it first: the scope's plain SHA-256 of a PAN, in a Redis key name,
 * would be cardholder data (PCI DSS 3.5.1.1 accepts only keyed hashes) and easy to reverse. Other
 * keys stay as they are, so their stored answers keep their Redis keys across this change.
 */
export function storableIdempotencyKey(secret: Buffer, idempotencyKey: string): string {
  if (!mayHoldCardNumber(idempotencyKey)) return idempotencyKey;
  return `hmac:${crypto.createHmac('sha256', secret).update('idempotency-key\n').update(idempotencyKey).digest('base64url')}`;
}
