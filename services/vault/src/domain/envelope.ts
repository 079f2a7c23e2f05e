import { secureRandomBytes, type KeyMode } from '@tessera/common';
import { EnvelopeOpenError, gcmOpen, gcmSeal } from './aesGcm';
import type { KeyRing } from './keyRing';

export { EnvelopeOpenError } from './aesGcm';

export type RecordKind = 'card' | 'cvv';

/**
 * Format 1 (records written before envelope encryption): the data sealed directly under the
 * key-encryption key `keyId`. Still opened; `rewrapRecord` migrates it to format 2.
 */
export interface DirectEnvelope {
  keyId: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

/**
 * Format 2, envelope encryption (docs/adr/0004): the data is sealed under a fresh random 256-bit
 * data key, and that data key is sealed ("wrapped") under the key-encryption key `keyId` from
 * VAULT_KEYS. Rotating the KEK re-wraps 32 bytes per record; the card ciphertext never changes.
 * All binary fields base64; both layers AES-256-GCM with their own random IV.
 */
export interface WrappedEnvelope extends DirectEnvelope {
  wrappedKey: string;
  wrapIv: string;
  wrapTag: string;
}

export type Envelope = DirectEnvelope | WrappedEnvelope;

/**
 * What a ciphertext belongs to. Bound in as AAD so a record cannot be moved to another token,
 * merchant or mode: a test key must never get a live card rendered, even by editing a record.
 */
export interface EnvelopeContext {
  merchantId: string;
  token: string;
  kind: RecordKind;
  /**
   * The mode of the key that created the token. null only for records written before tokens had
   * a mode: they were sealed without one, and the vault derives their mode from the card.
   */
  mode: KeyMode | null;
  /**
   * Set only on the card record of a provisional (browser-made) token: its deadline, RFC 3339.
   * Bound in so that neither the flag nor the deadline can be edited in the store: a record
   * stripped of them, or given a later deadline, no longer opens. Retaining the token re-seals
   * the card without it (rebindRecord).
   */
  provisionalUntil?: string | undefined;
  /**
   * Record format 4 (finding 5 of issue 11): the record's clear fields, canonically encoded
   * (recordMetadata.ts), bound into both layers so that editing any of them (merchant, mode,
   * last4, expiry, the CVV's nonce and deadline...) makes the record fail to open. Absent on
   * older records, which keep their own labels: a v4 record can never be presented as one.
   */
  metadata?: string | undefined;
  /**
   * Record format 6 (issue 30): `metadata` is then the base64 of the card's binary header
   * (compactCard.ts), bound under the v6 labels, so neither a v6 record presented as an older
   * one nor the reverse opens.
   */
  format?: 6 | undefined;
}

const DATA_KEY_BYTES = 32;

export function isWrapped(envelope: Envelope): envelope is WrappedEnvelope {
  return 'wrappedKey' in envelope && typeof envelope.wrappedKey === 'string';
}

/**
 * Only merchantId is free text; token, keyId, kind and mode never contain '|', so reading the
 * fields from the right makes the encodings unambiguous. Each layer has its own label so a value
 * of one layer can never be presented as the other, and a record with a mode has other labels
 * (v3) than one without, so neither can be presented as the other.
 */
function directAad(ctx: EnvelopeContext, keyId: string): Buffer {
  // Format 1 predates modes: such a record can only be opened as a record without one.
  if (ctx.mode !== null || ctx.provisionalUntil !== undefined) throw new EnvelopeOpenError('malformed');
  return Buffer.from(`tessera.v1|${ctx.merchantId}|${ctx.token}|${keyId}|${ctx.kind}`, 'utf8');
}

/** The wrapped data key is bound to its record and to the KEK that wrapped it. */
function wrapAad(ctx: EnvelopeContext, keyId: string): Buffer {
  if (ctx.metadata !== undefined) return v4Aad('dek', ctx, keyId);
  if (ctx.provisionalUntil !== undefined) {
    return Buffer.from(
      `tessera.v3p.dek|${ctx.merchantId}|${ctx.token}|${keyId}|${ctx.kind}|${modeOf(ctx)}|${ctx.provisionalUntil}`,
      'utf8',
    );
  }
  if (ctx.mode === null) return Buffer.from(`tessera.v2.dek|${ctx.merchantId}|${ctx.token}|${keyId}|${ctx.kind}`, 'utf8');
  return Buffer.from(`tessera.v3.dek|${ctx.merchantId}|${ctx.token}|${keyId}|${ctx.kind}|${ctx.mode}`, 'utf8');
}

/**
 * The data layer does not name the KEK (re-wrapping must not touch the data), but a data key is
 * unique to one record and only reachable through the wrap layer, which binds the KEK id. The
 * mode is bound in both layers, so neither a data key nor a ciphertext crosses between modes.
 */
function dataAad(ctx: EnvelopeContext): Buffer {
  if (ctx.metadata !== undefined) return v4Aad('data', ctx, null);
  if (ctx.provisionalUntil !== undefined) {
    return Buffer.from(`tessera.v3p.data|${ctx.merchantId}|${ctx.token}|${ctx.kind}|${modeOf(ctx)}|${ctx.provisionalUntil}`, 'utf8');
  }
  if (ctx.mode === null) return Buffer.from(`tessera.v2.data|${ctx.merchantId}|${ctx.token}|${ctx.kind}`, 'utf8');
  return Buffer.from(`tessera.v3.data|${ctx.merchantId}|${ctx.token}|${ctx.kind}|${ctx.mode}`, 'utf8');
}

/**
 * Provisional records exist only since tokens have a mode, and their deadline is a timestamp
 * (no '|'), so the v3p encodings stay unambiguous read from the right like the others.
 */
function modeOf(ctx: EnvelopeContext): KeyMode {
  if (ctx.mode === null || ctx.provisionalUntil?.includes('|')) throw new EnvelopeOpenError('malformed');
  return ctx.mode;
}

/**
 * Format 4 labels (format 6: the same layout under its own label): a JSON array is unambiguous whatever the fields contain, so the metadata (free
 * text included) needs no escaping rules. Only records with a mode have this format.
 */
function v4Aad(layer: 'dek' | 'data', ctx: EnvelopeContext, keyId: string | null): Buffer {
  if (ctx.mode === null) throw new EnvelopeOpenError('malformed');
  const fields = [ctx.merchantId, ctx.token, keyId, ctx.kind, ctx.mode, ctx.provisionalUntil ?? null, ctx.metadata];
  const label = ctx.format === 6 ? 'v6' : 'v4';
  return Buffer.from(`tessera.${label}.${layer}|${JSON.stringify(fields)}`, 'utf8');
}

function wrapDataKey(
  ring: KeyRing,
  ctx: EnvelopeContext,
  dataKey: Buffer,
): Pick<WrappedEnvelope, 'keyId' | 'wrappedKey' | 'wrapIv' | 'wrapTag'> {
  const keyId = ring.currentKeyId;
  const wrapped = ring.wrap(keyId, dataKey, wrapAad(ctx, keyId));
  return { keyId, wrappedKey: wrapped.ciphertext, wrapIv: wrapped.iv, wrapTag: wrapped.tag };
}

function unwrapDataKey(ring: KeyRing, ctx: EnvelopeContext, envelope: WrappedEnvelope): Buffer {
  const dataKey = ring.unwrap(
    envelope.keyId,
    {
      iv: envelope.wrapIv,
      ciphertext: envelope.wrappedKey,
      tag: envelope.wrapTag,
    },
    wrapAad(ctx, envelope.keyId),
  );
  if (dataKey.length !== DATA_KEY_BYTES) {
    dataKey.fill(0);
    throw new EnvelopeOpenError('malformed');
  }
  return dataKey;
}

/** Seals under a fresh data key wrapped by the ring's current KEK (format 2). */
export function sealRecord(ring: KeyRing, ctx: EnvelopeContext, plaintext: Buffer): WrappedEnvelope {
  const dataKey = secureRandomBytes(DATA_KEY_BYTES);
  try {
    const wrap = wrapDataKey(ring, ctx, dataKey);
    return { ...wrap, ...gcmSeal(dataKey, dataAad(ctx), plaintext) };
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Opens a record of either format with the KEK named in it. Any failure (unknown key, bad
 * lengths, tampering, wrong merchant/token) throws an EnvelopeOpenError that carries no key or
 * plaintext material; callers turn it into internal_error.
 */
export function openRecord(ring: KeyRing, ctx: EnvelopeContext, envelope: Envelope): Buffer {
  if (!isWrapped(envelope)) {
    // Format 1 sealed the data itself under the KEK, with the same AES-256-GCM as a wrap.
    return ring.unwrap(envelope.keyId, envelope, directAad(ctx, envelope.keyId));
  }
  const dataKey = unwrapDataKey(ring, ctx, envelope);
  try {
    return gcmOpen(dataKey, dataAad(ctx), envelope);
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Checks that the context (the record's clear fields) is what the record was sealed with, without
 * decrypting its data: unwrapping the data key authenticates the wrap layer's AAD, which binds the
 * same fields. GET and DELETE use it, so the PAN is not decrypted to read metadata. A format-1
 * record has no wrap layer and is opened (and zeroed) instead, until rewrap migrates it.
 */
export function authenticateRecord(ring: KeyRing, ctx: EnvelopeContext, envelope: Envelope): void {
  if (!isWrapped(envelope)) {
    openRecord(ring, ctx, envelope).fill(0);
    return;
  }
  unwrapDataKey(ring, ctx, envelope).fill(0);
}

/** True when the record is already in format 2 under the ring's current KEK. */
export function isCurrent(ring: KeyRing, envelope: Envelope): boolean {
  return isWrapped(envelope) && envelope.keyId === ring.currentKeyId;
}

/**
 * Moves a record to the ring's current KEK. A format-2 record keeps its data ciphertext and only
 * gets its data key re-wrapped; a format-1 record is opened and sealed afresh (the one-time
 * migration). Authenticates the old record first, so a tampered record is never "laundered"
 * into a valid one. Returns the envelope unchanged when it is already current.
 */
export function rewrapRecord(ring: KeyRing, ctx: EnvelopeContext, envelope: Envelope): Envelope {
  if (isCurrent(ring, envelope)) return envelope;
  if (!isWrapped(envelope)) {
    const plaintext = openRecord(ring, ctx, envelope);
    try {
      return sealRecord(ring, ctx, plaintext);
    } finally {
      plaintext.fill(0);
    }
  }
  const dataKey = unwrapDataKey(ring, ctx, envelope);
  try {
    // Prove the data layer still authenticates under this data key before re-wrapping it.
    gcmOpen(dataKey, dataAad(ctx), envelope).fill(0);
    return { ...envelope, ...wrapDataKey(ring, ctx, dataKey) };
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Opens a record under one context and seals it afresh under another: the one-time migration
 * that binds a mode into a record written before tokens had one. Authenticates first, like
 * rewrapRecord, so a tampered record is never laundered into a valid one.
 */
export function rebindRecord(ring: KeyRing, from: EnvelopeContext, to: EnvelopeContext, envelope: Envelope): WrappedEnvelope {
  const plaintext = openRecord(ring, from, envelope);
  try {
    return sealRecord(ring, to, plaintext);
  } finally {
    plaintext.fill(0);
  }
}
