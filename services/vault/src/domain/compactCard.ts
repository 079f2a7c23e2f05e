import { BRANDS, type Brand, type KeyMode } from '@tessera/common';
import type { StoredCard, StoredCvv } from './card';
import type { Envelope, WrappedEnvelope } from './envelope';

/**
 * Record format 6 (issue 30): a card or CVV record as raw bytes instead of JSON with base64 inside,
 * so a stored card fits a small Redis allocation. Two parts:
 *
 * - the header, every field the vault reads without decrypting, in a fixed layout; it is bound
 *   into both envelope layers (recordMetadata.ts cardBinding and cvvBinding, EnvelopeContext.format),
 *   so an edited byte makes the record fail to open;
 * - the envelope, raw: KEK id, wrap IV/tag/wrapped data key, data IV/tag/ciphertext. Not in the
 *   header: rewrap changes the KEK and the wrap layer without touching the data layer.
 *
 * Every encoding is canonical (one byte string per record): the parsers re-encode what they read
 * and refuses any other bytes, so no edit can leave the fields as they were.
 */
export const COMPACT_RECORD_VERSION = 6;

const FLAG_LIVE = 1;
const FLAG_PROVISIONAL = 2;
const FLAG_HOLDER_NAME = 4;
const FLAG_FINGERPRINT = 8;
const KNOWN_FLAGS = FLAG_LIVE | FLAG_PROVISIONAL | FLAG_HOLDER_NAME | FLAG_FINGERPRINT;

const FINGERPRINT_BYTES = 16;
const MERCHANT_KEK_ID_BYTES = 16;
const MERCHANT_KEK_PREFIX = 'm.';
/** Key id length 0 stands for a merchant KEK (`m.` + 16 raw bytes); root key ids are 1-255 bytes of text. */
const MERCHANT_KEK_MARK = 0;
const DATA_IV_BYTES = 12;
const DATA_TAG_BYTES = 16;
const CVV_NONCE_BYTES = 16;
const MAX_U48 = 2 ** 48 - 1;

/** Raised when a card cannot take format 6 (no mode, format-1 envelope, a non-canonical field): it keeps an older one. */
export class NotCompactable extends Error {}

/** The clear fields of a card as format 6 stores them (header), or NotCompactable. */
export type CompactFields = Omit<StoredCard, 'sealed' | 'metadataBound' | 'compact'>;

export function compactCardHeader(card: CompactFields): Buffer {
  const mode = card.mode;
  if (mode === undefined) throw new NotCompactable('no mode');
  const brand = BRANDS.indexOf(card.brand);
  if (brand < 0) throw new NotCompactable('brand');
  if (!/^\d{4}$/.test(card.last4)) throw new NotCompactable('last4');
  if (!Number.isInteger(card.expiryMonth) || card.expiryMonth < 1 || card.expiryMonth > 12) throw new NotCompactable('month');
  if (!Number.isInteger(card.expiryYear) || card.expiryYear < 0 || card.expiryYear > 0xffff) throw new NotCompactable('year');
  const hasFingerprint = card.fingerprint !== undefined;
  if (hasFingerprint !== (card.bin !== undefined)) throw new NotCompactable('bin and fingerprint go together');
  const flags =
    (mode === 'live' ? FLAG_LIVE : 0) |
    (card.provisional === true ? FLAG_PROVISIONAL : 0) |
    (card.holderNameAvailable ? FLAG_HOLDER_NAME : 0) |
    (hasFingerprint ? FLAG_FINGERPRINT : 0);
  const merchant = Buffer.from(card.merchantId, 'utf8');
  if (merchant.toString('utf8') !== card.merchantId) throw new NotCompactable('merchant id');
  const out = new ByteWriter();
  out.u8(COMPACT_RECORD_VERSION);
  out.u8(flags);
  out.u8(brand);
  out.u8(card.expiryMonth);
  out.u16(card.expiryYear);
  out.u48(timestampMs(card.createdAt));
  out.u48(timestampMs(card.expiresAt));
  out.u16(Number(card.last4));
  if (hasFingerprint) {
    if (!/^\d{6}$/.test(card.bin ?? '')) throw new NotCompactable('bin');
    out.u24(Number(card.bin));
    out.bytes(canonicalBase64url(card.fingerprint ?? '', FINGERPRINT_BYTES));
  }
  out.varint(merchant.length);
  out.bytes(merchant);
  return out.done();
}

/** The whole record: header, then the envelope. NotCompactable when it cannot take format 6. */
export function serializeCompactCard(card: StoredCard): Buffer {
  return Buffer.concat([compactCardHeader(card), envelopeBytes(card.sealed)]);
}

/**
 * A CVV record in format 6: version, flags (live mode), the 16-byte nonce raw, the deadline in ms
 * since the epoch (the header, bound like a card's), then the envelope. Only CVVs with a nonce and
 * a deadline (format 4's fields) take it.
 */
export function compactCvvHeader(cvv: Omit<StoredCvv, 'sealed' | 'compact'>): Buffer {
  if (cvv.mode === undefined || cvv.nonce === undefined || cvv.expiresAt === undefined) throw new NotCompactable('cvv fields');
  const out = new ByteWriter();
  out.u8(COMPACT_RECORD_VERSION);
  out.u8(cvv.mode === 'live' ? FLAG_LIVE : 0);
  out.bytes(canonicalBase64url(cvv.nonce, CVV_NONCE_BYTES));
  out.u48(timestampMs(cvv.expiresAt));
  return out.done();
}

export function serializeCompactCvv(cvv: StoredCvv): Buffer {
  return Buffer.concat([compactCvvHeader(cvv), envelopeBytes(cvv.sealed)]);
}

export function parseCompactCvv(raw: Buffer): StoredCvv {
  const input = new ByteReader(raw);
  if (input.u8() !== COMPACT_RECORD_VERSION) throw new Error('not format 6');
  const flags = input.u8();
  if ((flags & ~FLAG_LIVE) !== 0) throw new Error('flags');
  const nonce = input.bytes(CVV_NONCE_BYTES).toString('base64url');
  const expiresAt = new Date(input.u48()).toISOString();
  const mode: KeyMode = flags === FLAG_LIVE ? 'live' : 'test';
  const cvv: StoredCvv = { mode, nonce, expiresAt, compact: true, sealed: readEnvelope(input) };
  return checkCanonical(cvv, raw, serializeCompactCvv);
}

/** A sealed envelope, raw: what follows a format-6 header (not bound by it: rewrap changes it). */
function envelopeBytes(sealed: Envelope): Buffer {
  if (!('wrappedKey' in sealed)) throw new NotCompactable('format-1 envelope');
  const out = new ByteWriter();
  const keyId = Buffer.from(sealed.keyId, 'utf8');
  if (sealed.keyId.startsWith(MERCHANT_KEK_PREFIX)) {
    out.u8(MERCHANT_KEK_MARK);
    out.bytes(canonicalBase64url(sealed.keyId.slice(MERCHANT_KEK_PREFIX.length), MERCHANT_KEK_ID_BYTES));
  } else {
    if (keyId.length === 0 || keyId.length > 0xff || keyId.toString('utf8') !== sealed.keyId) throw new NotCompactable('key id');
    out.u8(keyId.length);
    out.bytes(keyId);
  }
  // The wrap layer is the key ring's (an HSM may use other lengths): each part says its length.
  for (const part of [sealed.wrapIv, sealed.wrapTag, sealed.wrappedKey]) {
    const bytes = canonicalBase64(part);
    if (bytes.length > 0xff) throw new NotCompactable('wrap layer');
    out.u8(bytes.length);
    out.bytes(bytes);
  }
  out.bytes(canonicalBase64(sealed.iv, DATA_IV_BYTES));
  out.bytes(canonicalBase64(sealed.tag, DATA_TAG_BYTES));
  out.bytes(canonicalBase64(sealed.ciphertext));
  return out.done();
}

function readEnvelope(input: ByteReader): WrappedEnvelope {
  const keyLength = input.u8();
  const keyId =
    keyLength === MERCHANT_KEK_MARK
      ? MERCHANT_KEK_PREFIX + input.bytes(MERCHANT_KEK_ID_BYTES).toString('base64url')
      : input.bytes(keyLength).toString('utf8');
  const wrapIv = input.bytes(input.u8()).toString('base64');
  const wrapTag = input.bytes(input.u8()).toString('base64');
  const wrappedKey = input.bytes(input.u8()).toString('base64');
  const iv = input.bytes(DATA_IV_BYTES).toString('base64');
  const tag = input.bytes(DATA_TAG_BYTES).toString('base64');
  const ciphertext = input.rest().toString('base64');
  return { keyId, wrapIv, wrapTag, wrappedKey, iv, tag, ciphertext };
}

/**
 * Canonical or nothing: bytes that decode to the same fields some other way (an invalid UTF-8
 * merchant id, a month 13...) are refused rather than opened as the record they resemble.
 */
function checkCanonical<T>(record: T, raw: Buffer, serialize: (record: T) => Buffer): T {
  let again: Buffer;
  try {
    again = serialize(record);
  } catch {
    throw new Error('not canonical');
  }
  if (!again.equals(raw)) throw new Error('not canonical');
  return record;
}

/** True when the stored bytes are a format-6 record, card or CVV (JSON records start with `{`). */
export function isCompactRecord(raw: Buffer): boolean {
  return raw.length > 0 && raw[0] === COMPACT_RECORD_VERSION;
}

/** The card in a format-6 record; throws (no detail: callers answer "unreadable") on any other bytes. */
export function parseCompactCard(raw: Buffer): StoredCard {
  const input = new ByteReader(raw);
  if (input.u8() !== COMPACT_RECORD_VERSION) throw new Error('not format 6');
  const flags = input.u8();
  if ((flags & ~KNOWN_FLAGS) !== 0) throw new Error('flags');
  const brand: Brand | undefined = BRANDS[input.u8()];
  if (brand === undefined) throw new Error('brand');
  const expiryMonth = input.u8();
  const expiryYear = input.u16();
  const createdAt = new Date(input.u48()).toISOString();
  const expiresAt = new Date(input.u48()).toISOString();
  const last4 = String(input.u16()).padStart(4, '0');
  let bin: string | undefined;
  let fingerprint: string | undefined;
  if ((flags & FLAG_FINGERPRINT) !== 0) {
    bin = String(input.u24()).padStart(6, '0');
    fingerprint = input.bytes(FINGERPRINT_BYTES).toString('base64url');
  }
  const merchantId = input.bytes(input.varint()).toString('utf8');
  const mode: KeyMode = (flags & FLAG_LIVE) !== 0 ? 'live' : 'test';
  const sealed = readEnvelope(input);
  const card: StoredCard = {
    merchantId,
    mode,
    ...((flags & FLAG_PROVISIONAL) !== 0 ? { provisional: true as const } : {}),
    last4,
    brand,
    expiryMonth,
    expiryYear,
    createdAt,
    expiresAt,
    holderNameAvailable: (flags & FLAG_HOLDER_NAME) !== 0,
    ...(fingerprint !== undefined ? { bin, fingerprint } : {}),
    metadataBound: true,
    compact: true,
    sealed,
  };
  return checkCanonical(card, raw, serializeCompactCard);
}

function timestampMs(text: string): number {
  const ms = Date.parse(text);
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_U48 || new Date(ms).toISOString() !== text) throw new NotCompactable('timestamp');
  return ms;
}

function canonicalBase64(text: string, length?: number): Buffer {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text || (length !== undefined && bytes.length !== length)) throw new NotCompactable('base64');
  return bytes;
}

function canonicalBase64url(text: string, length: number): Buffer {
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text || bytes.length !== length) throw new NotCompactable('base64url');
  return bytes;
}

class ByteWriter {
  private readonly parts: Buffer[] = [];

  u8(value: number): void {
    this.parts.push(Buffer.from([value]));
  }

  u16(value: number): void {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(value);
    this.parts.push(b);
  }

  u24(value: number): void {
    const b = Buffer.alloc(3);
    b.writeUIntBE(value, 0, 3);
    this.parts.push(b);
  }

  u48(value: number): void {
    const b = Buffer.alloc(6);
    b.writeUIntBE(value, 0, 6);
    this.parts.push(b);
  }

  /** LEB128: one byte below 128 (every merchant id in practice), no length limit. */
  varint(value: number): void {
    const bytes: number[] = [];
    let rest = value;
    do {
      const low = rest & 0x7f;
      rest = Math.floor(rest / 128);
      bytes.push(rest > 0 ? low | 0x80 : low);
    } while (rest > 0);
    this.parts.push(Buffer.from(bytes));
  }

  bytes(value: Buffer): void {
    this.parts.push(value);
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

class ByteReader {
  private at = 0;

  constructor(private readonly raw: Buffer) {}

  private take(n: number): Buffer {
    if (n < 0 || this.at + n > this.raw.length) throw new Error('truncated');
    const out = this.raw.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  u8(): number {
    return this.take(1).readUInt8();
  }

  u16(): number {
    return this.take(2).readUInt16BE();
  }

  u24(): number {
    return this.take(3).readUIntBE(0, 3);
  }

  u48(): number {
    return this.take(6).readUIntBE(0, 6);
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 5; i++) {
      const byte = this.u8();
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new Error('varint');
  }

  bytes(n: number): Buffer {
    return Buffer.from(this.take(n));
  }

  rest(): Buffer {
    return this.bytes(this.raw.length - this.at);
  }
}
