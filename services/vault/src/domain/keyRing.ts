import { randomBytes } from 'node:crypto';
import { keyedEntries } from '@tessera/common';
import { EnvelopeOpenError, gcmOpen, gcmSeal, type Sealed } from './aesGcm';

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const KEY_BYTES = 32;

/** Where a key-encryption key lives: in VAULT_KEYS (process memory) or in an HSM reached over PKCS#11. */
export type KekProviderName = 'env' | 'pkcs11';

/**
 * The vault's key-encryption keys (KEKs), wherever they live. The newest key of the configured
 * provider seals new data keys; every key still opens what it sealed, so rotation is: add a key,
 * deploy, re-wrap or let old records expire, then drop the old key. Key ids are one namespace
 * across providers: a record names only its key id, so a key may move into an HSM (imported
 * under the same id) without touching a record.
 */
export interface KeyRing {
  readonly currentKeyId: string;
  /** Every key that opens records, oldest first. */
  readonly keyIds: readonly string[];
  providerOf(keyId: string): KekProviderName | undefined;
  /** AES-256-GCM under the KEK `keyId` with `aad` bound in; for an HSM the KEK never leaves it. */
  wrap(keyId: string, plaintext: Buffer, aad: Buffer): Sealed;
  /**
   * The inverse of wrap. Throws EnvelopeOpenError (unknown key, malformed, failed authentication),
   * or TesseraError service_unavailable when the HSM cannot be used right now.
   */
  unwrap(keyId: string, sealed: Sealed, aad: Buffer): Buffer;
}

/** A ring of VAULT_KEYS: its keys are in process memory. */
export interface EnvKeyRing extends KeyRing {
  key(keyId: string): Buffer | undefined;
}

export type KeyRingParseResult = { ok: true; ring: EnvKeyRing } | { ok: false; problems: string[] };

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Parses `keyId:base64,keyId:base64`. Problems name the entry by position and key id only:
 * key material is never echoed, not even a malformed fragment of it.
 */
export function parseKeyRing(text: string): KeyRingParseResult {
  const problems: string[] = [];
  const keys = new Map<string, Buffer>();
  const order: string[] = [];
  const entries = keyedEntries(text);
  if (entries.length === 0) return { ok: false, problems: ['must list at least one key as keyId:base64'] };

  entries.forEach(({ where, id: keyId, value: material }) => {
    if (keyId === undefined) {
      problems.push(`${where} must be keyId:base64`);
      return;
    }
    if (!KEY_ID_PATTERN.test(keyId)) {
      problems.push(`${where}: key id must be 1-32 characters of A-Z a-z 0-9 _ -`);
      return;
    }
    if (keys.has(keyId)) {
      problems.push(`${where}: key id "${keyId}" is listed more than once`);
      return;
    }
    const key = BASE64.test(material) ? Buffer.from(material, 'base64') : undefined;
    if (key === undefined || key.length !== KEY_BYTES) {
      problems.push(
        `${where} (key id "${keyId}"): key must be ${KEY_BYTES} bytes encoded as base64` +
          (key === undefined ? ' (not valid base64)' : ` (decodes to ${key.length} bytes)`),
      );
      return;
    }
    keys.set(keyId, key);
    order.push(keyId);
  });

  if (problems.length > 0) return { ok: false, problems };
  const currentKeyId = order[order.length - 1];
  if (currentKeyId === undefined) return { ok: false, problems: ['must list at least one key as keyId:base64'] };
  const keyOf = (keyId: string): Buffer => {
    const key = keys.get(keyId);
    if (key === undefined) throw new EnvelopeOpenError('unknown_key');
    return key;
  };
  return {
    ok: true,
    ring: {
      currentKeyId,
      keyIds: order,
      key: (keyId) => keys.get(keyId),
      providerOf: (keyId) => (keys.has(keyId) ? 'env' : undefined),
      wrap: (keyId, plaintext, aad) => gcmSeal(keyOf(keyId), aad, plaintext),
      unwrap: (keyId, sealed, aad) => gcmOpen(keyOf(keyId), aad, sealed),
    },
  };
}

/**
 * The configured provider's ring, plus read-only keys from the other one: how records move
 * between providers (VAULT_KEYS to an HSM, or back). New data keys are wrapped only under
 * `current`'s newest key; `readOnly`'s keys only open records until a rewrap has moved them.
 */
export function combineKeyRings(current: KeyRing, readOnly: KeyRing | undefined): KeyRing {
  if (readOnly === undefined) return current;
  const shared = readOnly.keyIds.filter((id) => current.keyIds.includes(id));
  if (shared.length > 0) throw new Error(`key ids are listed by both providers: ${shared.join(', ')}`);
  const ringOf = (keyId: string): KeyRing => {
    if (current.providerOf(keyId) !== undefined) return current;
    if (readOnly.providerOf(keyId) !== undefined) return readOnly;
    throw new EnvelopeOpenError('unknown_key');
  };
  return {
    currentKeyId: current.currentKeyId,
    keyIds: [...readOnly.keyIds, ...current.keyIds],
    providerOf: (keyId) => current.providerOf(keyId) ?? readOnly.providerOf(keyId),
    wrap: (keyId, plaintext, aad) => ringOf(keyId).wrap(keyId, plaintext, aad),
    unwrap: (keyId, sealed, aad) => ringOf(keyId).unwrap(keyId, sealed, aad),
  };
}

/** A fresh VAULT_KEYS entry, for development and for operators generating keys. */
export function generateKeyRingEntry(keyId: string): string {
  if (!KEY_ID_PATTERN.test(keyId)) throw new Error('key id must be 1-32 characters of A-Z a-z 0-9 _ -');
  return `${keyId}:${randomBytes(KEY_BYTES).toString('base64')}`;
}
