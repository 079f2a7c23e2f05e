import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { TesseraError } from '@tessera/common';
import type { KeyRing } from './keyRing';

export type RecordKind = 'card' | 'cvv';

/** One AES-256-GCM sealed value as stored; all binary fields base64. */
export interface Envelope {
  keyId: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

/** What a ciphertext belongs to. Bound in as AAD so a record cannot be moved to another token or merchant. */
export interface EnvelopeContext {
  merchantId: string;
  token: string;
  kind: RecordKind;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Only merchantId is free text; token, keyId and kind never contain '|', so reading the fields
 * from the right makes the encoding unambiguous.
 */
function associatedData(ctx: EnvelopeContext, keyId: string): Buffer {
  return Buffer.from(`tessera.v1|${ctx.merchantId}|${ctx.token}|${keyId}|${ctx.kind}`, 'utf8');
}

export function sealRecord(ring: KeyRing, ctx: EnvelopeContext, plaintext: Buffer): Envelope {
  const keyId = ring.currentKeyId;
  const key = ring.key(keyId);
  if (key === undefined) throw new TesseraError('internal_error', { message: 'The current encryption key is missing.' });
  // A fresh random IV per record: GCM's security collapses if an IV repeats under one key.
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(ctx, keyId));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return {
    keyId,
    iv: iv.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

export class EnvelopeOpenError extends Error {
  constructor(readonly reason: 'unknown_key' | 'malformed' | 'authentication_failed') {
    super(`could not open the sealed record: ${reason}`);
    this.name = 'EnvelopeOpenError';
  }
}

/**
 * Opens a record with the key named in it. Any failure (unknown key, bad lengths, tampering,
 * wrong merchant/token) throws an EnvelopeOpenError that carries no key or plaintext material;
 * callers turn it into internal_error.
 */
export function openRecord(ring: KeyRing, ctx: EnvelopeContext, envelope: Envelope): Buffer {
  const key = ring.key(envelope.keyId);
  if (key === undefined) throw new EnvelopeOpenError('unknown_key');
  const iv = Buffer.from(envelope.iv, 'base64');
  const tag = Buffer.from(envelope.tag, 'base64');
  const ciphertext = Buffer.from(envelope.ciphertext, 'base64');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new EnvelopeOpenError('malformed');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(ctx, envelope.keyId));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    throw new EnvelopeOpenError('authentication_failed');
  }
}
