import { randomBytes } from 'node:crypto';
import { isTestCard } from '@tessera/common';
import { parseKeyRing, type EnvKeyRing } from '../domain/keyRing';
import type { CardToTokenize } from '../domain/card';

export function keyRingEntry(keyId: string, key: Buffer = randomBytes(32)): string {
  return `${keyId}:${key.toString('base64')}`;
}

/** A ring from entries as VAULT_KEYS would list them; the last is the current key. */
export function keyRingOf(...entries: string[]): EnvKeyRing {
  const parsed = parseKeyRing(entries.join(','));
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.ring;
}

/** A card as the gateway sends it; the mode is the one a key must have to tokenize that number. */
export function aCard(overrides: Partial<CardToTokenize> = {}): CardToTokenize {
  const number = overrides.number ?? '4242424242424242';
  return {
    merchantId: 'merchant_a',
    number,
    holderName: 'Ada Lovelace',
    expiryMonth: 4,
    expiryYear: new Date().getUTCFullYear() + 3,
    cvv: '123',
    mode: isTestCard(number) ? 'test' : 'live',
    ...overrides,
  };
}
