import { createHmac } from 'node:crypto';
import { secureRandomBytes, type KeyMode } from '@tessera/common';
import { EnvelopeOpenError } from './aesGcm';
import type { KeyRing } from './keyRing';

/**
 * Card fingerprints (issue 15). PCI DSS 3.5.1.1: a hash of a PAN must be keyed, with the key
 * managed like other key material, never a plain hash (a plain SHA-256 of a 16-digit PAN with a
 * known BIN is brute-forced in seconds). The key is one random 256-bit value per deployment, kept
 * in the store wrapped under the key ring exactly like a record's data key (docs/SECURITY.md), so it
 * survives restarts, moves with KEK rotation (rewrap re-wraps it) and works with an HSM ring.
 */
export const FINGERPRINT_KEY_BYTES = 32;
/** 128 bits: collisions between two cards of one merchant are out of reach, and the value stays short. */
const FINGERPRINT_BYTES = 16;
const FINGERPRINT_SHAPE = /^[A-Za-z0-9_-]{22}$/;

/**
 * Per merchant and mode: the same card gives the same fingerprint for one merchant's keys of one
 * mode and unrelated ones elsewhere, so fingerprints cannot be joined across merchants. The JSON
 * array makes the encoding unambiguous whatever the merchant id contains.
 */
export function fingerprintOf(key: Buffer, merchantId: string, mode: KeyMode, number: string): string {
  return createHmac('sha256', key)
    .update(JSON.stringify(['tessera.fingerprint.v1', merchantId, mode, number]), 'utf8')
    .digest()
    .subarray(0, FINGERPRINT_BYTES)
    .toString('base64url');
}

/**
 * The alias index's name for an alias: a keyed hash, like a fingerprint but under its own label, so
 * what is looked up (any number a merchant sends as a card or a token, a real PAN included) never
 * reaches Redis in clear, not even in a key name (SLOWLOG keeps a slow command's arguments).
 */
export function aliasDigestOf(key: Buffer, merchantId: string, mode: KeyMode, alias: string): string {
  return createHmac('sha256', key)
    .update(JSON.stringify(['tessera.alias.v1', merchantId, mode, alias]), 'utf8')
    .digest('base64url');
}

export function isFingerprintShaped(value: string): boolean {
  return FINGERPRINT_SHAPE.test(value);
}

/** PCI DSS 3.4.1 allows the first six digits beside the last four. */
export function binOf(number: string): string {
  return number.slice(0, 6);
}

/** The stored form of the fingerprint key: the key ring's wrap of it, all binary fields base64. */
interface StoredFingerprintKey {
  v: 1;
  keyId: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

/** Bound into the wrap so the value can be opened as nothing but the fingerprint key, under nothing but its KEK id. */
function fingerprintKeyAad(keyId: string): Buffer {
  return Buffer.from(`tessera.fingerprint-key.v1|${keyId}`, 'utf8');
}

/** A fresh fingerprint key and its stored form, wrapped under the ring's current KEK. */
export function newFingerprintKey(ring: KeyRing): { key: Buffer; stored: string } {
  const key = secureRandomBytes(FINGERPRINT_KEY_BYTES);
  return { key, stored: sealFingerprintKey(ring, key) };
}

function sealFingerprintKey(ring: KeyRing, key: Buffer): string {
  const keyId = ring.currentKeyId;
  const sealed = ring.wrap(keyId, key, fingerprintKeyAad(keyId));
  const stored: StoredFingerprintKey = { v: 1, keyId, ...sealed };
  return JSON.stringify(stored);
}

function parseStored(stored: string): StoredFingerprintKey {
  let value: Partial<StoredFingerprintKey>;
  try {
    value = JSON.parse(stored) as Partial<StoredFingerprintKey>;
  } catch {
    throw new EnvelopeOpenError('malformed');
  }
  if (
    value.v !== 1 ||
    typeof value.keyId !== 'string' ||
    typeof value.iv !== 'string' ||
    typeof value.ciphertext !== 'string' ||
    typeof value.tag !== 'string'
  ) {
    throw new EnvelopeOpenError('malformed');
  }
  return value as StoredFingerprintKey;
}

/** Throws EnvelopeOpenError (unknown KEK, tampered) or the HSM's service_unavailable, like a record. */
export function openFingerprintKey(ring: KeyRing, stored: string): Buffer {
  const { keyId, iv, ciphertext, tag } = parseStored(stored);
  const key = ring.unwrap(keyId, { iv, ciphertext, tag }, fingerprintKeyAad(keyId));
  if (key.length !== FINGERPRINT_KEY_BYTES) {
    key.fill(0);
    throw new EnvelopeOpenError('malformed');
  }
  return key;
}

/** The KEK id the stored fingerprint key is wrapped under (for `vault keys`' usage count). */
export function fingerprintKeyKekId(stored: string): string {
  return parseStored(stored).keyId;
}

/** The stored key re-wrapped under the ring's current KEK, or null when it already is. */
export function rewrapFingerprintKey(ring: KeyRing, stored: string): string | null {
  if (parseStored(stored).keyId === ring.currentKeyId) return null;
  const key = openFingerprintKey(ring, stored);
  try {
    return sealFingerprintKey(ring, key);
  } finally {
    key.fill(0);
  }
}
