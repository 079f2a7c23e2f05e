import { createCipheriv, createDecipheriv } from 'node:crypto';
import { secureRandomBytes } from '@tessera/common';

export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** One AES-256-GCM seal; all binary fields base64. */
export interface Sealed {
  iv: string;
  ciphertext: string;
  tag: string;
}

export class EnvelopeOpenError extends Error {
  /** key_destroyed: the record's merchant KEK was crypto-shredded (domain/merchantKeys.ts). */
  constructor(readonly reason: 'unknown_key' | 'malformed' | 'authentication_failed' | 'key_destroyed') {
    super(`could not open the sealed record: ${reason}`);
    this.name = 'EnvelopeOpenError';
  }
}

export function gcmSeal(key: Buffer, aad: Buffer, plaintext: Buffer): Sealed {
  // A fresh random IV per seal: GCM's security collapses if an IV repeats under one key.
  const iv = secureRandomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv: iv.toString('base64'), ciphertext: ciphertext.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** The IV and tag of a sealed value, refused unless they have GCM's lengths. */
export function decodeSealed(sealed: Sealed): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const iv = Buffer.from(sealed.iv, 'base64');
  const tag = Buffer.from(sealed.tag, 'base64');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new EnvelopeOpenError('malformed');
  return { iv, tag, ciphertext: Buffer.from(sealed.ciphertext, 'base64') };
}

export function gcmOpen(key: Buffer, aad: Buffer, sealed: Sealed): Buffer {
  const { iv, tag, ciphertext } = decodeSealed(sealed);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    throw new EnvelopeOpenError('authentication_failed');
  }
}
