import { z } from 'zod';
import { BRANDS, TesseraError } from '@tessera/common';
import type { StoredCard, StoredCvv } from '../domain/card';

/**
 * Stored form of the records. A version field lets a later format coexist with records written
 * before it; a record that does not parse is an internal error, never a crash.
 */
const RECORD_VERSION = 3;
/**
 * Version 1 records (sealed directly under a KEK) and version 2 records (no mode) are still read;
 * `npm run vault -- rewrap` migrates them. Version 3 adds the token's mode; a mode field on an
 * older record is dropped (the record was not sealed with one, so it could only be a forgery).
 */
const olderVersion = z.union([z.literal(1), z.literal(2)]);
const mode = z.enum(['test', 'live']);

const directEnvelopeSchema = z.object({
  keyId: z.string(),
  iv: z.string(),
  ciphertext: z.string(),
  tag: z.string(),
});

// The wrapped form is tried first: a plain z.object would strip the wrapping fields.
const envelopeSchema = z.union([
  directEnvelopeSchema.extend({ wrappedKey: z.string(), wrapIv: z.string(), wrapTag: z.string() }),
  directEnvelopeSchema,
]);

const cardFields = {
  merchantId: z.string(),
  last4: z.string(),
  brand: z.enum(BRANDS),
  expiryMonth: z.number().int(),
  expiryYear: z.number().int(),
  createdAt: z.string(),
  expiresAt: z.string(),
  holderNameAvailable: z.boolean(),
  sealed: envelopeSchema,
};

const storedCardSchema = z.union([
  // `provisional` (browser-made, not yet retained) exists only on version 3: older records never
  // had it, so one found on them is dropped like a mode. An older vault drops it too; the record
  // then fails to open there (it is sealed with its deadline), never outliving it.
  z.object({ v: z.literal(RECORD_VERSION), mode, provisional: z.literal(true).optional(), ...cardFields }),
  z.object({ v: olderVersion, ...cardFields }),
]);

const storedCvvSchema = z.union([
  z.object({ v: z.literal(RECORD_VERSION), mode, sealed: envelopeSchema }),
  z.object({ v: olderVersion, sealed: envelopeSchema }),
]);

/** A record without a mode is written as version 2, so it still reads as one without. */
export function serializeCard(card: StoredCard): string {
  return JSON.stringify({ v: card.mode === undefined ? 2 : RECORD_VERSION, ...card });
}

export function serializeCvv(cvv: StoredCvv): string {
  return JSON.stringify({ v: cvv.mode === undefined ? 2 : RECORD_VERSION, ...cvv });
}

function parseWith<T>(schema: z.ZodType<T>, raw: string): T {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new TesseraError('internal_error', { message: 'A stored record is unreadable.' });
  }
  const result = schema.safeParse(json);
  if (!result.success) throw new TesseraError('internal_error', { message: 'A stored record is unreadable.' });
  return result.data;
}

export function parseCard(raw: string): StoredCard {
  const { v: _version, ...card } = parseWith(storedCardSchema, raw);
  return card;
}

export function parseCvv(raw: string): StoredCvv {
  const { v: _version, ...cvv } = parseWith(storedCvvSchema, raw);
  return cvv;
}

/**
 * The braces are a Redis Cluster hash tag: both keys of a token hash to the same slot, so the
 * MULTI that writes them and the DEL that removes them stay single-slot.
 */
export function cardKey(token: string): string {
  return `tessera:card:{${token}}`;
}

export function cvvKey(token: string): string {
  return `tessera:cvv:{${token}}`;
}

export const CARD_KEY_PREFIX = 'tessera:card:{';

/** The token of a card key, or undefined for anything else. */
export function tokenOfCardKey(key: string): string | undefined {
  if (!key.startsWith(CARD_KEY_PREFIX) || !key.endsWith('}')) return undefined;
  return key.slice(CARD_KEY_PREFIX.length, -1);
}

export function recordKey(kind: 'card' | 'cvv', token: string): string {
  return kind === 'card' ? cardKey(token) : cvvKey(token);
}

export function checkpointKey(name: string): string {
  return `tessera:checkpoint:${name}`;
}
