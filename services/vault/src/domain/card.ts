import { detectBrand, expiryMonthEnd, isLuhnValid, isTestCard, TesseraError, type Brand, type KeyMode } from '@tessera/common';
import type { TokenRecord__Output } from '@tessera/protos';
import type { Envelope } from './envelope';
import { binOf } from './fingerprint';
import { keyModeOf } from './tokenMode';

/** A card as the gateway hands it over (already validated there; checked again here). */
export interface CardToTokenize {
  merchantId: string;
  number: string;
  holderName: string;
  expiryMonth: number;
  expiryYear: number;
  cvv: string;
  /** The creating key's mode as sent on the wire; checked (see checkCardToTokenize). */
  mode: string;
  /** Made in a browser: kept for BROWSER_TOKEN_TTL_SECONDS only, unless retained. */
  provisional?: boolean;
  /** A shorter life for this provisional token (made while its key was under card-testing attack); absent or 0: none. */
  provisionalTtlSeconds?: number;
  /** Answer the merchant's existing token for this card instead of a new one (POST /v1/token's `dedupe`). */
  dedupe?: boolean;
  /** Alias formats to give the token (domain/aliases.ts), as sent; checked by the vault. */
  aliasFormats?: string[];
}

/** The merchant and key mode a call acts for; a token answers only to the pair that created it. */
export interface TokenOwner {
  merchantId: string;
  /** As sent on the wire: anything but "test" or "live" owns nothing. */
  mode: string;
}

/** What is kept for a token. Only `sealed` holds the PAN and holder name; the rest is not sensitive. */
export interface StoredCard {
  merchantId: string;
  /**
   * The mode of the key that created the token, also bound into `sealed`. Absent only on records
   * written before tokens had a mode; the vault derives theirs from the card (tokenMode.ts).
   */
  mode?: KeyMode;
  /**
   * Present (true) only while a browser-made token has not been retained; `expiresAt` is then its
   * provisional deadline. Both are bound into `sealed` (EnvelopeContext.provisionalUntil).
   */
  provisional?: true;
  last4: string;
  brand: Brand;
  expiryMonth: number;
  expiryYear: number;
  createdAt: string;
  expiresAt: string;
  holderNameAvailable: boolean;
  /**
   * Record format 5 (both or neither): the first six digits and the card's fingerprint
   * (fingerprint.ts), bound into `sealed` like the fields above. Absent on tokens made before.
   */
  bin?: string;
  fingerprint?: string;
  /**
   * Record format 4: every field above is bound into `sealed` (recordMetadata.ts), so GET and
   * DELETE can trust them once the wrap layer authenticates. Absent on older records, whose
   * merchant, mode and provisional deadline only are bound.
   */
  metadataBound?: true;
  /**
   * Record format 6 (issue 30, with metadataBound): stored as bytes (store/compactCard.ts), and
   * what `sealed` binds is the binary header of the fields above (recordMetadata.ts) under the
   * format's own labels. New cards are written so; rewrap moves older ones.
   */
  compact?: true;
  sealed: Envelope;
}

/** The CVV lives in its own record with its own short TTL (PCI DSS 3.3.2: no CVV after authorization). */
export interface StoredCvv {
  /** As StoredCard.mode: absent only on records written before tokens had a mode. */
  mode?: KeyMode;
  /**
   * Record format 4 (both or neither): a random id and the CVV's deadline (RFC 3339), bound into
   * `sealed`. The vault refuses the CVV after its deadline even if the record is still in Redis
   * (restored from a copy), and remembers the nonce of every CVV it consumed until then, so a
   * copy restored after use is refused too (docs/adr/0010).
   */
  nonce?: string;
  expiresAt?: string;
  /** Record format 6 (issue 30, with nonce and expiresAt): stored as bytes, its binary header bound as a card's is. */
  compact?: true;
  sealed: Envelope;
}

/** The plaintext inside StoredCard.sealed. */
export interface CardSecret {
  number: string;
  holderName: string;
}

/**
 * The plaintext of a format-6 card: a zero byte (a JSON secret starts with `{`), the number's
 * length, its digits two to a byte, then the holder name in UTF-8 (16 digits and a 10-character
 * name: 20 bytes instead of 55).
 */
const COMPACT_SECRET = 0;

export function encodeCardSecret(secret: CardSecret): Buffer {
  const digits = secret.number;
  if (!/^\d{1,255}$/.test(digits)) throw new TesseraError('internal_error', { message: 'A card number cannot be sealed.' });
  const packed = Buffer.alloc(Math.ceil(digits.length / 2));
  for (let i = 0; i < digits.length; i++) {
    const digit = digits.charCodeAt(i) - 48;
    packed[i >> 1] = (packed[i >> 1] ?? 0) | (i % 2 === 0 ? digit << 4 : digit);
  }
  return Buffer.concat([Buffer.from([COMPACT_SECRET, digits.length]), packed, Buffer.from(secret.holderName, 'utf8')]);
}

/** Either plaintext form (JSON before format 6); undefined when it is neither. Never echoes the plaintext. */
export function decodeCardSecret(plaintext: Buffer): CardSecret | undefined {
  if (plaintext.length >= 2 && plaintext[0] === COMPACT_SECRET) {
    const length = plaintext[1] ?? 0;
    const packedBytes = Math.ceil(length / 2);
    if (length === 0 || plaintext.length < 2 + packedBytes) return undefined;
    let number = '';
    for (let i = 0; i < length; i++) {
      const byte = plaintext[2 + (i >> 1)] ?? 0;
      const digit = i % 2 === 0 ? byte >> 4 : byte & 0x0f;
      if (digit > 9) return undefined;
      number += String(digit);
    }
    return { number, holderName: plaintext.subarray(2 + packedBytes).toString('utf8') };
  }
  try {
    const parsed = JSON.parse(plaintext.toString('utf8')) as Partial<CardSecret>;
    if (typeof parsed.number === 'string' && typeof parsed.holderName === 'string')
      return { number: parsed.number, holderName: parsed.holderName };
  } catch {
    // neither form
  }
  return undefined;
}

/** Exactly the proto's TokenRecord, so the reply cannot drift from the contract. */
export type TokenRecordView = TokenRecord__Output;

const MERCHANT_ID_MAX = 128;
const HOLDER_NAME_MAX = 256;

/**
 * Defense in depth: the gateway validates cards fully (brand lengths, expiry, test/live mode);
 * the vault refuses anything that could not be a card even if a caller skips that. Messages
 * never echo the submitted values. Returns the token's mode.
 */
export function checkCardToTokenize(card: CardToTokenize): KeyMode {
  const mode = keyModeOf(card.mode);
  // An older gateway sends no mode: refuse rather than guess, a token's mode is for life.
  if (mode === undefined) throw new TesseraError('parameter_invalid', { param: 'mode', message: 'mode must be "test" or "live".' });
  if (card.merchantId.length === 0 || card.merchantId.length > MERCHANT_ID_MAX) {
    throw new TesseraError('parameter_invalid', { param: 'merchantId', message: 'merchantId must be 1-128 characters.' });
  }
  if (!/^\d{12,19}$/.test(card.number)) {
    throw new TesseraError('card_number_invalid', { param: 'number', message: 'The card number must be 12 to 19 digits.' });
  }
  if (!isLuhnValid(card.number)) {
    throw new TesseraError('card_number_invalid', { param: 'number', message: 'The card number fails the Luhn check.' });
  }
  if (!Number.isInteger(card.expiryMonth) || card.expiryMonth < 1 || card.expiryMonth > 12) {
    throw new TesseraError('parameter_invalid', { param: 'expiryMonth', message: 'expiryMonth must be an integer from 1 to 12.' });
  }
  if (!Number.isInteger(card.expiryYear) || card.expiryYear < 1000 || card.expiryYear > 9999) {
    throw new TesseraError('parameter_invalid', { param: 'expiryYear', message: 'expiryYear must be a four-digit year.' });
  }
  if (card.cvv !== '' && !/^\d{3,4}$/.test(card.cvv)) {
    throw new TesseraError('parameter_invalid', { param: 'cvv', message: 'cvv must be 3 or 4 digits.' });
  }
  if (card.holderName.length > HOLDER_NAME_MAX) {
    throw new TesseraError('parameter_invalid', { param: 'holderName', message: 'holderName must be at most 256 characters.' });
  }
  // The same rule as the gateway's validateCard, and what lets the mode of a token written
  // before modes were recorded be derived from its card.
  if (mode === 'live' && isTestCard(card.number)) throw new TesseraError('test_card_in_live_mode', { param: 'number' });
  if (mode === 'test' && !isTestCard(card.number)) throw new TesseraError('live_card_in_test_mode', { param: 'number' });
  return mode;
}

/** The same defense in depth for a stored card's new expiry and holder name (PATCH /v1/token/{token}). */
export function checkCardChange(change: {
  expiryMonth?: number | undefined;
  expiryYear?: number | undefined;
  holderName?: string | undefined;
}): void {
  if (change.expiryMonth !== undefined && (!Number.isInteger(change.expiryMonth) || change.expiryMonth < 1 || change.expiryMonth > 12)) {
    throw new TesseraError('parameter_invalid', { param: 'expiryMonth', message: 'expiryMonth must be an integer from 1 to 12.' });
  }
  if (change.expiryYear !== undefined && (!Number.isInteger(change.expiryYear) || change.expiryYear < 1000 || change.expiryYear > 9999)) {
    throw new TesseraError('parameter_invalid', { param: 'expiryYear', message: 'expiryYear must be a four-digit year.' });
  }
  if (change.holderName !== undefined && change.holderName.length > HOLDER_NAME_MAX) {
    throw new TesseraError('parameter_invalid', { param: 'holderName', message: 'holderName must be at most 256 characters.' });
  }
}

const MIN_TTL_MS = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface Retention {
  expiresAt: Date;
  cardTtlMs: number;
  cvvTtlMs: number;
}

/**
 * Card data is kept until its expiry month has ended everywhere, plus a grace period for late
 * captures and refunds. The CVV never outlives the card record it belongs to.
 */
export function retentionFor(
  expiryMonth: number,
  expiryYear: number,
  opts: { cardGraceDays: number; cvvTtlSeconds: number; now: Date },
): Retention {
  const expiresAt = new Date(expiryMonthEnd(expiryMonth, expiryYear).getTime() + opts.cardGraceDays * DAY_MS);
  const cardTtlMs = Math.max(MIN_TTL_MS, expiresAt.getTime() - opts.now.getTime());
  const cvvTtlMs = Math.max(MIN_TTL_MS, Math.min(opts.cvvTtlSeconds * 1000, cardTtlMs));
  return { expiresAt, cardTtlMs, cvvTtlMs };
}

/**
 * A provisional token's life: the vault's BROWSER_TOKEN_TTL_SECONDS, or the caller's shorter one.
 * Only ever shorter: a caller cannot make a browser token outlive the vault's own limit.
 */
export function provisionalTtlSecondsOf(card: Pick<CardToTokenize, 'provisionalTtlSeconds'>, browserTokenTtlSeconds: number): number {
  const asked = card.provisionalTtlSeconds;
  return asked !== undefined && asked > 0 ? Math.min(asked, browserTokenTtlSeconds) : browserTokenTtlSeconds;
}

/**
 * A provisional (browser-made) token lives at most `browserTokenTtlSeconds`, card and CVV alike,
 * unless the merchant's server retains it; never longer than an ordinary token of the same card.
 */
export function provisionalRetention(normal: Retention, browserTokenTtlSeconds: number, now: Date): Retention {
  const cardTtlMs = Math.max(MIN_TTL_MS, Math.min(browserTokenTtlSeconds * 1000, normal.cardTtlMs));
  return { expiresAt: new Date(now.getTime() + cardTtlMs), cardTtlMs, cvvTtlMs: Math.min(normal.cvvTtlMs, cardTtlMs) };
}

/**
 * When a provisional token is retained, the card is kept as if it had been an ordinary token from
 * the start (expiry + grace, counted from now), and the CVV for what is left of its own
 * CVV_TTL_SECONDS since the token was made: retaining never gives a CVV a longer life. A cvvTtlMs
 * of 0 means the CVV has already expired and is left alone.
 */
export function retentionOnRetain(
  card: Pick<StoredCard, 'expiryMonth' | 'expiryYear' | 'createdAt'>,
  opts: { cardGraceDays: number; cvvTtlSeconds: number; now: Date },
): Retention {
  const normal = retentionFor(card.expiryMonth, card.expiryYear, opts);
  const cvvLeftMs = Date.parse(card.createdAt) + opts.cvvTtlSeconds * 1000 - opts.now.getTime();
  const cvvTtlMs = Number.isFinite(cvvLeftMs) ? Math.max(0, Math.min(cvvLeftMs, normal.cardTtlMs)) : 0;
  return { ...normal, cvvTtlMs };
}

/** A provisional token past its deadline is gone, even if its store record outlived it. */
export function isPastProvisionalDeadline(card: Pick<StoredCard, 'provisional' | 'expiresAt'>, now: Date): boolean {
  if (card.provisional !== true) return false;
  const deadline = Date.parse(card.expiresAt);
  return !Number.isFinite(deadline) || now.getTime() >= deadline;
}

export function describeCard(card: CardToTokenize, mode: KeyMode, sealed: Envelope, expiresAt: Date, now: Date): StoredCard {
  return { ...describeCardFields(card, mode, expiresAt, now), sealed };
}

/**
 * The clear fields of a new token's card record: what format 4 binds into its envelope (format 5
 * when the fingerprint is given).
 */
export function describeCardFields(
  card: CardToTokenize,
  mode: KeyMode,
  expiresAt: Date,
  now: Date,
  fingerprint?: string,
): Omit<StoredCard, 'sealed'> {
  return {
    merchantId: card.merchantId,
    mode,
    ...(card.provisional === true ? { provisional: true as const } : {}),
    last4: card.number.slice(-4),
    brand: detectBrand(card.number),
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
    createdAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
    holderNameAvailable: card.holderName.length > 0,
    ...(fingerprint === undefined ? {} : { bin: binOf(card.number), fingerprint }),
  };
}

export function toTokenRecordView(
  token: string,
  card: StoredCard,
  cvvAvailable: boolean,
  deduplicated = false,
  aliases: Record<string, string> = {},
): TokenRecordView {
  return {
    token,
    last4: card.last4,
    brand: card.brand,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
    createdAt: card.createdAt,
    expiresAt: card.expiresAt,
    cvvAvailable,
    holderNameAvailable: card.holderNameAvailable,
    provisional: card.provisional === true,
    bin: card.bin ?? '',
    fingerprint: card.fingerprint ?? '',
    deduplicated,
    aliases,
  };
}
