import { inspect } from 'node:util';
import { keyedEntries } from '@tessera/common';
import { KEY_ID_PATTERN } from '../domain/keyRing';

/**
 * A PIN (or any secret) that prints as [REDACTED] however it is logged or serialised, so a config
 * object or an error that holds one can never leak it; `reveal()` is the one way to read it.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[REDACTED]';
  }
  toJSON(): string {
    return '[REDACTED]';
  }
  [inspect.custom](): string {
    return '[REDACTED]';
  }
}

/** One entry of PKCS11_KEYS: the vault's key id (stored in records) and the key's CKA_LABEL in the HSM. */
export interface HsmKey {
  keyId: string;
  label: string;
}

export interface Pkcs11Settings {
  /** The vendor's PKCS#11 library (a .so), e.g. /usr/lib/softhsm/libsofthsm2.so. */
  modulePath: string;
  /** The token by its label, or the slot by its id (as `pkcs11-tool -L` prints it). */
  token: { label: string } | { slotId: bigint };
  pin: Secret;
  /** Oldest first; the last wraps new data keys when the HSM is the current provider. */
  keys: readonly HsmKey[];
}

export type HsmKeysParseResult = { ok: true; keys: HsmKey[] } | { ok: false; problems: string[] };

/** CKA_LABEL is free text; a comma separates entries, so it cannot be part of one. */
const LABEL_PATTERN = /^[^,\s](?:[^,]{0,62}[^,\s])?$/;

/** Parses `keyId:label,keyId:label` (a bare `keyId` means the label equals the id), newest last. */
export function parseHsmKeys(text: string): HsmKeysParseResult {
  const problems: string[] = [];
  const keys: HsmKey[] = [];
  const entries = keyedEntries(text);
  if (entries.length === 0) return { ok: false, problems: ['must list at least one key as keyId:label'] };
  entries.forEach(({ where, id, value }) => {
    const keyId = id ?? value;
    const label = id === undefined ? value : value.trim();
    if (!KEY_ID_PATTERN.test(keyId)) {
      problems.push(`${where}: key id must be 1-32 characters of A-Z a-z 0-9 _ -`);
      return;
    }
    if (!LABEL_PATTERN.test(label)) {
      problems.push(`${where} (key id "${keyId}"): the HSM key label must be 1-64 characters, no comma`);
      return;
    }
    if (keys.some((k) => k.keyId === keyId)) {
      problems.push(`${where}: key id "${keyId}" is listed more than once`);
      return;
    }
    if (keys.some((k) => k.label === label)) {
      problems.push(`${where}: HSM key label "${label}" is listed more than once`);
      return;
    }
    keys.push({ keyId, label });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, keys };
}
