import { randomBytes } from 'node:crypto';

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const KEY_BYTES = 32;

/**
 * The vault's encryption keys. The newest key (last in VAULT_KEYS) seals new records; every key
 * still opens the records it sealed, so rotation is: append a key, deploy, re-encrypt or let old
 * records expire, then drop the old key.
 */
export interface KeyRing {
  readonly currentKeyId: string;
  readonly keyIds: readonly string[];
  key(keyId: string): Buffer | undefined;
}

export type KeyRingParseResult = { ok: true; ring: KeyRing } | { ok: false; problems: string[] };

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Parses `keyId:base64,keyId:base64`. Problems name the entry by position and key id only:
 * key material is never echoed, not even a malformed fragment of it.
 */
export function parseKeyRing(text: string): KeyRingParseResult {
  const problems: string[] = [];
  const keys = new Map<string, Buffer>();
  const order: string[] = [];
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  if (entries.length === 0) return { ok: false, problems: ['must list at least one key as keyId:base64'] };

  entries.forEach((entry, index) => {
    const where = `entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) {
      problems.push(`${where} must be keyId:base64`);
      return;
    }
    const keyId = entry.slice(0, colon);
    const material = entry.slice(colon + 1);
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
  return {
    ok: true,
    ring: {
      currentKeyId,
      keyIds: order,
      key: (keyId) => keys.get(keyId),
    },
  };
}

/** A fresh VAULT_KEYS entry, for development and for operators generating keys. */
export function generateKeyRingEntry(keyId: string): string {
  if (!KEY_ID_PATTERN.test(keyId)) throw new Error('key id must be 1-32 characters of A-Z a-z 0-9 _ -');
  return `${keyId}:${randomBytes(KEY_BYTES).toString('base64')}`;
}
