import { createHash } from 'node:crypto';
import { secureRandomBytes } from '@tessera/common';
import { EnvelopeOpenError, gcmOpen, gcmSeal, type Sealed } from './aesGcm';
import type { KeyRing } from './keyRing';

/**
 * The stored form of a merchant's forward-proxy CA (ADR 0013, point 4): its certificate in clear
 * (it is public) and its private key sealed like a card record (envelope.ts): under a fresh data
 * key, itself wrapped under the key ring's current KEK (VAULT_KEYS or the HSM of ADR 0009). The
 * merchant id, the label "ca" and the certificate's SHA-256 are bound into both layers, so a
 * record copied to another merchant, or a certificate swapped beside the key, does not open.
 */
export interface StoredCaKey {
  v: 1;
  certificatePem: string;
  keyId: string;
  wrappedKey: string;
  wrapIv: string;
  wrapTag: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

const DATA_KEY_BYTES = 32;

function certificateDigest(certificatePem: string): string {
  return createHash('sha256').update(certificatePem, 'utf8').digest('base64url');
}

/** A JSON array keeps the encoding unambiguous whatever the merchant id holds. */
function wrapAad(merchantId: string, keyId: string, certificatePem: string): Buffer {
  return Buffer.from(`tessera.ca.v1.dek|${JSON.stringify([merchantId, 'ca', keyId, certificateDigest(certificatePem)])}`, 'utf8');
}

function dataAad(merchantId: string, certificatePem: string): Buffer {
  return Buffer.from(`tessera.ca.v1.data|${JSON.stringify([merchantId, 'ca', certificateDigest(certificatePem)])}`, 'utf8');
}

function wrapDataKey(
  ring: KeyRing,
  merchantId: string,
  certificatePem: string,
  dataKey: Buffer,
): Pick<StoredCaKey, 'keyId' | 'wrappedKey' | 'wrapIv' | 'wrapTag'> {
  const keyId = ring.currentKeyId;
  const wrapped = ring.wrap(keyId, dataKey, wrapAad(merchantId, keyId, certificatePem));
  return { keyId, wrappedKey: wrapped.ciphertext, wrapIv: wrapped.iv, wrapTag: wrapped.tag };
}

function unwrapDataKey(ring: KeyRing, merchantId: string, stored: StoredCaKey): Buffer {
  const sealed: Sealed = { iv: stored.wrapIv, ciphertext: stored.wrappedKey, tag: stored.wrapTag };
  const dataKey = ring.unwrap(stored.keyId, sealed, wrapAad(merchantId, stored.keyId, stored.certificatePem));
  if (dataKey.length !== DATA_KEY_BYTES) {
    dataKey.fill(0);
    throw new EnvelopeOpenError('malformed');
  }
  return dataKey;
}

/** The CA's stored form, its private key (PKCS#8 DER) sealed under the ring's current KEK. */
export function sealCaKey(ring: KeyRing, merchantId: string, certificatePem: string, privateKeyPkcs8: Buffer): string {
  const dataKey = secureRandomBytes(DATA_KEY_BYTES);
  try {
    const stored: StoredCaKey = {
      v: 1,
      certificatePem,
      ...wrapDataKey(ring, merchantId, certificatePem, dataKey),
      ...gcmSeal(dataKey, dataAad(merchantId, certificatePem), privateKeyPkcs8),
    };
    return JSON.stringify(stored);
  } finally {
    dataKey.fill(0);
  }
}

export function parseStoredCaKey(text: string): StoredCaKey {
  let value: Partial<StoredCaKey>;
  try {
    value = JSON.parse(text) as Partial<StoredCaKey>;
  } catch {
    throw new EnvelopeOpenError('malformed');
  }
  const fields = ['certificatePem', 'keyId', 'wrappedKey', 'wrapIv', 'wrapTag', 'iv', 'ciphertext', 'tag'] as const;
  if (value === null || typeof value !== 'object' || value.v !== 1 || fields.some((f) => typeof value[f] !== 'string')) {
    throw new EnvelopeOpenError('malformed');
  }
  return value as StoredCaKey;
}

/**
 * The CA's certificate and private key (PKCS#8 DER: the caller zeroes it after use). Throws
 * EnvelopeOpenError (unknown KEK, another merchant's record, tampered) or the HSM's
 * service_unavailable, like a record.
 */
export function openCaKey(ring: KeyRing, merchantId: string, text: string): { certificatePem: string; privateKeyPkcs8: Buffer } {
  const stored = parseStoredCaKey(text);
  const dataKey = unwrapDataKey(ring, merchantId, stored);
  try {
    return { certificatePem: stored.certificatePem, privateKeyPkcs8: gcmOpen(dataKey, dataAad(merchantId, stored.certificatePem), stored) };
  } finally {
    dataKey.fill(0);
  }
}

/** The KEK id a stored CA key is wrapped under (`vault status`). */
export function caKeyKekId(text: string): string {
  return parseStoredCaKey(text).keyId;
}

/**
 * The stored CA re-wrapped under the ring's current KEK, or null when it already is. Only the data
 * key is re-wrapped (the sealed private key does not change), after the data layer is proven to
 * open under it, so a tampered record is never laundered into a valid one.
 */
export function rewrapCaKey(ring: KeyRing, merchantId: string, text: string): string | null {
  const stored = parseStoredCaKey(text);
  if (stored.keyId === ring.currentKeyId) return null;
  const dataKey = unwrapDataKey(ring, merchantId, stored);
  try {
    gcmOpen(dataKey, dataAad(merchantId, stored.certificatePem), stored).fill(0);
    const next: StoredCaKey = { ...stored, ...wrapDataKey(ring, merchantId, stored.certificatePem, dataKey) };
    return JSON.stringify(next);
  } finally {
    dataKey.fill(0);
  }
}
