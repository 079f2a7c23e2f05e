import { z } from 'zod';
import { BRANDS, TesseraError } from '@tessera/common';
import type { StoredCard, StoredCvv } from '../domain/card';

/**
 * Stored form of the records. A version field lets a later format coexist with records written
 * before it; a record that does not parse is an internal error, never a crash.
 */
const RECORD_VERSION = 1;

const envelopeSchema = z.object({
  keyId: z.string(),
  iv: z.string(),
  ciphertext: z.string(),
  tag: z.string(),
});

const storedCardSchema = z.object({
  v: z.literal(RECORD_VERSION),
  merchantId: z.string(),
  last4: z.string(),
  brand: z.enum(BRANDS),
  expiryMonth: z.number().int(),
  expiryYear: z.number().int(),
  createdAt: z.string(),
  expiresAt: z.string(),
  holderNameAvailable: z.boolean(),
  sealed: envelopeSchema,
});

const storedCvvSchema = z.object({ v: z.literal(RECORD_VERSION), sealed: envelopeSchema });

export function serializeCard(card: StoredCard): string {
  return JSON.stringify({ v: RECORD_VERSION, ...card });
}

export function serializeCvv(cvv: StoredCvv): string {
  return JSON.stringify({ v: RECORD_VERSION, ...cvv });
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
