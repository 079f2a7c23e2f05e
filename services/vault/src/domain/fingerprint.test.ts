import { createHash, randomBytes } from 'node:crypto';
import { EnvelopeOpenError } from './aesGcm';
import { binOf, fingerprintOf, newFingerprintKey, openFingerprintKey, rewrapFingerprintKey } from './fingerprint';
import { generateKeyRingEntry, parseKeyRing, type EnvKeyRing } from './keyRing';

const ringOf = (...entries: string[]): EnvKeyRing => {
  const parsed = parseKeyRing(entries.join(','));
  if (!parsed.ok) throw new Error(parsed.problems.join());
  return parsed.ring;
};

describe('fingerprintOf', () => {
  const key = randomBytes(32);
  const pan = '4242424242424242';

  it('is stable for one card, merchant and mode, and differs across merchants, modes, cards and keys', () => {
    const value = fingerprintOf(key, 'acme', 'test', pan);
    expect(value).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(fingerprintOf(key, 'acme', 'test', pan)).toBe(value);
    const others = [
      fingerprintOf(key, 'globex', 'test', pan),
      fingerprintOf(key, 'acme', 'live', pan),
      fingerprintOf(key, 'acme', 'test', '5555555555554444'),
      fingerprintOf(randomBytes(32), 'acme', 'test', pan),
    ];
    expect(new Set([value, ...others]).size).toBe(5);
  });

  it('is keyed: not any plain hash of the number (PCI DSS 3.5.1.1)', () => {
    const value = fingerprintOf(key, 'acme', 'test', pan);
    for (const algorithm of ['sha256', 'sha1', 'md5']) {
      expect(createHash(algorithm).update(pan).digest('base64url')).not.toContain(value);
    }
  });

  it('takes the BIN as the first six digits only', () => {
    expect(binOf(pan)).toBe('424242');
  });
});

describe('the fingerprint key at rest', () => {
  const oldEntry = generateKeyRingEntry('old');
  const newEntry = generateKeyRingEntry('new');

  it('is wrapped under the current KEK, re-wrapped by rotation to the same key, and no longer opens without its KEK', () => {
    const before = ringOf(oldEntry);
    const made = newFingerprintKey(before);
    expect(made.stored).not.toContain(made.key.toString('base64'));
    expect(openFingerprintKey(before, made.stored).equals(made.key)).toBe(true);
    expect(rewrapFingerprintKey(before, made.stored)).toBeNull();

    const rotated = ringOf(oldEntry, newEntry);
    const moved = rewrapFingerprintKey(rotated, made.stored);
    if (moved === null) throw new Error('expected a re-wrap');
    expect(JSON.parse(moved)).toMatchObject({ keyId: 'new' });
    expect(openFingerprintKey(ringOf(newEntry), moved).equals(made.key)).toBe(true);
    expect(() => openFingerprintKey(ringOf(newEntry), made.stored)).toThrow(EnvelopeOpenError);
  });

  it('refuses a stored key whose bytes or KEK id were edited', () => {
    const ring = ringOf(oldEntry, newEntry);
    const { stored } = newFingerprintKey(ring);
    const value = JSON.parse(stored) as Record<string, string>;
    const flipped = {
      ...value,
      ciphertext: Buffer.from(Buffer.from(value.ciphertext as string, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64'),
    };
    expect(() => openFingerprintKey(ring, JSON.stringify(flipped))).toThrow(EnvelopeOpenError);
    expect(() => openFingerprintKey(ring, JSON.stringify({ ...value, keyId: 'old' }))).toThrow(EnvelopeOpenError);
    expect(() => openFingerprintKey(ring, 'not json')).toThrow(EnvelopeOpenError);
  });
});
