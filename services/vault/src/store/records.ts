import { z } from 'zod';
import { BRANDS, TesseraError } from '@tessera/common';
import type { StoredCard, StoredCvv } from '../domain/card';
import { isCompactRecord, parseCompactCard, parseCompactCvv, serializeCompactCard, serializeCompactCvv } from '../domain/compactCard';

/**
 * A record as stored: bytes. A format-6 card or CVV is binary (domain/compactCard.ts); every
 * older record is JSON in UTF-8. Read with getBuffer and written as a Buffer, so Lua
 * compare-and-set scripts compare the exact bytes.
 */
export type RawRecord = Buffer;

/**
 * Stored form of the records. A version field lets a later format coexist with records written
 * before it; a record that does not parse is an internal error, never a crash.
 */
const RECORD_VERSION = 5;
/**
 * Version 1 records (sealed directly under a KEK) and version 2 records (no mode) are still read;
 * `npm run vault -- rewrap` migrates them. Version 3 adds the token's mode; a mode field on an
 * older record is dropped (the record was not sealed with one, so it could only be a forgery).
 */
const olderVersion = z.union([z.literal(1), z.literal(2)]);
/**
 * Version 4 binds every clear field into the envelope (StoredCard.metadataBound, StoredCvv.nonce
 * and expiresAt); version 3 records (mode, but nothing else bound) are still read. The version is
 * itself clear text, but each version has its own AAD labels, so an edited version fails to open.
 */
const VERSION_3 = 3;
/**
 * Version 5 (card records only) adds the BIN and the fingerprint, bound like every other clear
 * field. A card record without them stays version 4 (tokens made before, and rewrap's migrations,
 * which do not decrypt the PAN to compute one). An older vault refuses a version-5 record as
 * unreadable rather than strip the fields and raise a tampering alarm.
 */
const VERSION_4 = 4;
/*
 * Version 6 (issue 30, cards and CVVs) is not JSON: raw bytes (domain/compactCard.ts), told
 * apart by its first byte. serializeCard writes it for every card sealed as format 6
 * (StoredCard.compact, StoredCvv.compact); older records keep the JSON versions above until rewrap moves them.
 */
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
  z.object({
    v: z.literal(RECORD_VERSION),
    mode,
    provisional: z.literal(true).optional(),
    bin: z.string(),
    fingerprint: z.string(),
    ...cardFields,
  }),
  z.object({ v: z.literal(VERSION_4), mode, provisional: z.literal(true).optional(), ...cardFields }),
  // `provisional` (browser-made, not yet retained) exists only on version 3: older records never
  // had it, so one found on them is dropped like a mode. An older vault drops it too; the record
  // then fails to open there (it is sealed with its deadline), never outliving it.
  z.object({ v: z.literal(VERSION_3), mode, provisional: z.literal(true).optional(), ...cardFields }),
  z.object({ v: olderVersion, ...cardFields }),
]);

const storedCvvSchema = z.union([
  z.object({ v: z.literal(VERSION_4), mode, nonce: z.string().min(1), expiresAt: z.string().min(1), sealed: envelopeSchema }),
  z.object({ v: z.literal(VERSION_3), mode, sealed: envelopeSchema }),
  z.object({ v: olderVersion, sealed: envelopeSchema }),
]);

/**
 * A record is written with the version it was sealed as: without a mode 2, with a mode but
 * nothing else bound 3 (a record rewrap has not migrated yet), fully bound 4 or 5, binary 6.
 */
export function serializeCard(card: StoredCard): RawRecord {
  if (card.compact === true) return serializeCompactCard(card);
  return Buffer.from(serializeJsonCard(card), 'utf8');
}

function serializeJsonCard(card: StoredCard): string {
  const { metadataBound, compact: _compact, ...fields } = card;
  const bound = card.fingerprint !== undefined ? RECORD_VERSION : VERSION_4;
  const v = card.mode === undefined ? 2 : metadataBound === true ? bound : VERSION_3;
  return JSON.stringify({ v, ...fields });
}

export function serializeCvv(cvv: StoredCvv): RawRecord {
  if (cvv.compact === true) return serializeCompactCvv(cvv);
  return Buffer.from(serializeJsonCvv(cvv), 'utf8');
}

function serializeJsonCvv({ compact: _compact, ...cvv }: StoredCvv): string {
  const v = cvv.mode === undefined ? 2 : cvv.nonce !== undefined && cvv.expiresAt !== undefined ? VERSION_4 : VERSION_3;
  return JSON.stringify({ v, ...cvv });
}

function parseWith<T>(schema: z.ZodType<T>, raw: RawRecord | string): T {
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    throw new TesseraError('internal_error', { message: 'A stored record is unreadable.' });
  }
  const result = schema.safeParse(json);
  if (!result.success) throw new TesseraError('internal_error', { message: 'A stored record is unreadable.' });
  return result.data;
}

/** A format-6 record parsed, or undefined for a JSON one; bytes that do not parse are "unreadable", never detailed. */
function parseCompact<T>(raw: RawRecord | string, parse: (raw: Buffer) => T): T | undefined {
  if (typeof raw === 'string' || !isCompactRecord(raw)) return undefined;
  try {
    return parse(raw);
  } catch {
    throw new TesseraError('internal_error', { message: 'A stored record is unreadable.' });
  }
}

export function parseCard(raw: RawRecord | string): StoredCard {
  const compact = parseCompact(raw, parseCompactCard);
  if (compact !== undefined) return compact;
  const { v: version, ...card } = parseWith(storedCardSchema, raw);
  return version === RECORD_VERSION || version === VERSION_4 ? { ...card, metadataBound: true } : card;
}

export function parseCvv(raw: RawRecord | string): StoredCvv {
  const compact = parseCompact(raw, parseCompactCvv);
  if (compact !== undefined) return compact;
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

/**
 * The replay ids of the CVVs of a token that were consumed (a Redis set, same hash tag, so the
 * take script stays single-slot; under `tessera:cvv:` so the vault's ACL pattern covers it).
 */
export function usedCvvKey(token: string): string {
  return `tessera:cvv:used:{${token}}`;
}

export const CARD_KEY_PREFIX = 'tessera:card:{';
/** Every CVV-side key of a token: the CVV itself and its used-CVV marks. */
export const CVV_KEY_PREFIX = 'tessera:cvv:';

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

/**
 * The fingerprint key, wrapped under the key ring (domain/fingerprint.ts). Under `tessera:card:`
 * so the vault's ACL pattern covers it, but not `tessera:card:{`, so SCAN over card records
 * (rewrap, key usage) never mistakes it for a token.
 */
export const FINGERPRINT_KEY_KEY = 'tessera:card:fingerprint-key';

/**
 * The fingerprint index: fingerprint -> the token `dedupe` answers. A fingerprint is already per
 * merchant and mode (its HMAC binds both), so it names the index entry alone; the braces keep the
 * entry a key of its own Cluster slot. Never matched by the card SCAN (no `{` after `card:`).
 */
export function fingerprintIndexKey(fingerprint: string): string {
  return `tessera:card:fp:{${fingerprint}}`;
}

/**
 * The alias index: an alias's keyed digest (domain/fingerprint.ts aliasDigestOf; never the alias,
 * since what is looked up may be a real card number) -> the token it names, unique per merchant and mode because the key
 * carries both (claimed with SET NX, so two concurrent claims cannot both win). In the merchant's
 * slot ({m:<id>}, as the gateway's per-merchant keys); under `tessera:card:` so the vault's ACL
 * pattern covers it, never matched by the card SCAN (no `{` right after `card:`).
 */
export function aliasIndexKey(merchantId: string, mode: string, aliasDigest: string): string {
  return `tessera:card:alias:{m:${merchantId}}:${mode}:${aliasDigest}`;
}

/**
 * A token's aliases (a hash, format -> alias), in the token's slot like its card, so the card's
 * write and its DEL carry it in the same MULTI.
 */
export function tokenAliasesKey(token: string): string {
  return `tessera:card:aliases:{${token}}`;
}

/**
 * A merchant and mode's key-encryption key (domain/merchantKeys.ts), wrapped under the root ring.
 * In the merchant's slot ({m:<id>}) like its alias index; under `tessera:card:` so the vault's ACL
 * pattern covers it, never matched by the card SCAN (no `{` right after `card:`).
 */
export function merchantKekKey(merchantId: string, mode: string): string {
  return `tessera:card:kek:{m:${merchantId}}:${mode}`;
}

export const MERCHANT_KEK_KEY_PREFIX = 'tessera:card:kek:{m:';

/** The merchant and mode of a merchant KEK key, or undefined for anything else. */
export function ownerOfMerchantKekKey(key: string): { merchantId: string; mode: string } | undefined {
  const match = /^tessera:card:kek:\{m:(.+)\}:(test|live)$/.exec(key);
  return match?.[1] === undefined || match[2] === undefined ? undefined : { merchantId: match[1], mode: match[2] };
}

/** The merchant and mode's destroyed KEK ids (a hash, kek id -> when), same slot as the KEK. */
export function shreddedKeksKey(merchantId: string, mode: string): string {
  return `tessera:card:kek-shredded:{m:${merchantId}}:${mode}`;
}
