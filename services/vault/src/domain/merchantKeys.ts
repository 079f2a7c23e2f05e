import { secureRandomBytes, type KeyMode } from '@tessera/common';
import { EnvelopeOpenError, gcmOpen, gcmSeal } from './aesGcm';
import { KEY_BYTES, type KeyRing } from './keyRing';

/**
 * Per-merchant key-encryption keys (issue 29): each merchant and mode has its own KEK, which wraps
 * the data keys of its records; the root ring (VAULT_KEYS or the HSM) wraps only these KEKs and the
 * fingerprint key. Destroying one merchant KEK makes every record under it unreadable at once
 * (crypto-shredding) without touching anyone else's.
 *
 * A merchant KEK id is `m.` + 22 base64url characters: root key ids cannot contain a dot
 * (KEY_ID_PATTERN), so a record's keyId alone says which kind of key wrapped it.
 */
const MERCHANT_KEK_ID = /^m\.[A-Za-z0-9_-]{22}$/;

export function isMerchantKekId(keyId: string): boolean {
  return MERCHANT_KEK_ID.test(keyId);
}

function newMerchantKekId(): string {
  return `m.${secureRandomBytes(16).toString('base64url')}`;
}

/** A merchant KEK in memory: only inside the vault process, like a data key while it is used. */
export interface MerchantKek {
  kekId: string;
  key: Buffer;
}

/** The stored form: the KEK wrapped under a root key, all binary fields base64. */
interface StoredMerchantKek {
  v: 1;
  kekId: string;
  /** The root key that wraps it: rewrap moves it to the newest one. */
  keyId: string;
  createdAt: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

/**
 * Bound into the root wrap: a stored KEK opens only as the KEK of the merchant and mode it was made
 * for, under its own id, so copying one merchant's KEK record into another's slot gains nothing.
 */
function kekAad(merchantId: string, mode: KeyMode, kekId: string, rootKeyId: string): Buffer {
  return Buffer.from(`tessera.merchant-kek.v1|${JSON.stringify([merchantId, mode, kekId, rootKeyId])}`, 'utf8');
}

function seal(root: KeyRing, merchantId: string, mode: KeyMode, kek: MerchantKek, createdAt: string): string {
  const keyId = root.currentKeyId;
  const sealed = root.wrap(keyId, kek.key, kekAad(merchantId, mode, kek.kekId, keyId));
  const stored: StoredMerchantKek = { v: 1, kekId: kek.kekId, keyId, createdAt, ...sealed };
  return JSON.stringify(stored);
}

/** A fresh KEK for the merchant and mode and its stored form, wrapped under the root ring's current key. */
export function newMerchantKek(root: KeyRing, merchantId: string, mode: KeyMode, now: Date): { kek: MerchantKek; stored: string } {
  const kek = { kekId: newMerchantKekId(), key: secureRandomBytes(KEY_BYTES) };
  return { kek, stored: seal(root, merchantId, mode, kek, now.toISOString()) };
}

function parseStored(stored: string): StoredMerchantKek {
  let value: Partial<StoredMerchantKek>;
  try {
    value = JSON.parse(stored) as Partial<StoredMerchantKek>;
  } catch {
    throw new EnvelopeOpenError('malformed');
  }
  const { v, kekId, keyId, createdAt, iv, ciphertext, tag } = value;
  if (
    v !== 1 ||
    typeof kekId !== 'string' ||
    !isMerchantKekId(kekId) ||
    typeof keyId !== 'string' ||
    typeof createdAt !== 'string' ||
    typeof iv !== 'string' ||
    typeof ciphertext !== 'string' ||
    typeof tag !== 'string'
  ) {
    throw new EnvelopeOpenError('malformed');
  }
  return { v, kekId, keyId, createdAt, iv, ciphertext, tag };
}

/** The id of a stored KEK without opening it (for shredding and status); throws EnvelopeOpenError when malformed. */
export function merchantKekIdOf(stored: string): string {
  return parseStored(stored).kekId;
}

/** The root key a stored KEK is wrapped under. */
export function merchantKekRootKeyId(stored: string): string {
  return parseStored(stored).keyId;
}

export function openMerchantKek(root: KeyRing, merchantId: string, mode: KeyMode, stored: string): MerchantKek {
  const parsed = parseStored(stored);
  const key = root.unwrap(parsed.keyId, parsed, kekAad(merchantId, mode, parsed.kekId, parsed.keyId));
  if (key.length !== KEY_BYTES) {
    key.fill(0);
    throw new EnvelopeOpenError('malformed');
  }
  return { kekId: parsed.kekId, key };
}

/** The stored KEK re-wrapped under the root ring's current key, or null when it already is. */
export function rewrapMerchantKek(root: KeyRing, merchantId: string, mode: KeyMode, stored: string): string | null {
  const parsed = parseStored(stored);
  if (parsed.keyId === root.currentKeyId) return null;
  const kek = openMerchantKek(root, merchantId, mode, stored);
  try {
    return seal(root, merchantId, mode, kek, parsed.createdAt);
  } finally {
    kek.key.fill(0);
  }
}

/** What the vault knows of one merchant and mode's keys. */
export interface MerchantKeyState {
  /** The live KEK; undefined before first use or after a shred (until the next first use). */
  kek: MerchantKek | undefined;
  /** KEK ids destroyed by crypto-shredding. */
  shredded: ReadonlySet<string>;
  /** When the merchant and mode were last shredded; then records not under the live KEK are refused too. */
  shreddedAt: string | undefined;
}

/**
 * The ring one merchant and mode's records are sealed and opened with: new data keys are wrapped
 * under its KEK (when it has one); records still wrapped under a root key (made before merchant
 * KEKs, until rewrap moves them) still open. After a shred, a record under a destroyed KEK, or
 * under a root key (it belonged to the merchant before the shred), throws EnvelopeOpenError
 * 'key_destroyed': the vault answers it like a deleted token, without a tampering alarm. A record
 * naming a merchant key that is not this merchant and mode's fails authentication. The ring must
 * be built from a fresh read when the record names a merchant key the cache does not know
 * (MerchantKeyRings.forReading), or a key made a moment ago on another replica would look foreign.
 */
export function merchantKeyRing(root: KeyRing, state: MerchantKeyState): KeyRing {
  const { kek } = state;
  const refuse = (keyId: string): void => {
    if (kek !== undefined && keyId === kek.kekId) return;
    if (isMerchantKekId(keyId)) {
      // Another merchant's or mode's key (the record's clear fields were edited to name this one),
      // or a key this merchant and mode never had: not theirs, answered like tampering.
      throw new EnvelopeOpenError(state.shredded.has(keyId) || state.shreddedAt !== undefined ? 'key_destroyed' : 'authentication_failed');
    }
    if (state.shreddedAt !== undefined) throw new EnvelopeOpenError('key_destroyed');
  };
  return {
    currentKeyId: kek?.kekId ?? root.currentKeyId,
    keyIds: kek === undefined ? root.keyIds : [...root.keyIds, kek.kekId],
    providerOf: (keyId) => (kek !== undefined && keyId === kek.kekId ? root.providerOf(root.currentKeyId) : root.providerOf(keyId)),
    wrap: (keyId, plaintext, aad) => {
      if (kek !== undefined && keyId === kek.kekId) return gcmSeal(kek.key, aad, plaintext);
      refuse(keyId);
      return root.wrap(keyId, plaintext, aad);
    },
    unwrap: (keyId, sealed, aad) => {
      if (kek !== undefined && keyId === kek.kekId) return gcmOpen(kek.key, aad, sealed);
      refuse(keyId);
      return root.unwrap(keyId, sealed, aad);
    },
  };
}
