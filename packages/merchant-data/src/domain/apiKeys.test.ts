import zlib from 'node:zlib';
import {
  apiKeyChecksum,
  buildApiKeyRecord,
  digestsEqual,
  generateApiKey,
  hashApiKey,
  isApiKeyFormat,
  isLegacyApiKey,
  issueApiKey,
  keyKindOf,
  kindAndModeOfApiKey,
  modeOfApiKey,
  parseApiKeyPeppers,
  pepperIdOf,
  randomBase62,
} from './apiKeys';

const PEPPER = 'p'.repeat(32);
const OTHER_PEPPER = 'q'.repeat(32);

describe('API key generation', () => {
  it('produces tsk_test_ or tsk_live_, 32 random base62 characters and a 6-character CRC32 checksum', () => {
    const key = generateApiKey('test');
    expect(key).toMatch(/^tsk_test_[0-9A-Za-z]{38}$/);
    expect(generateApiKey('live')).toMatch(/^tsk_live_[0-9A-Za-z]{38}$/);
    const body = key.slice(0, -6);
    let crc = 0;
    for (const c of key.slice(-6)) crc = crc * 62 + '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.indexOf(c);
    expect(crc).toBe(zlib.crc32(body));
  });

  it('rejects a key with any single character changed, by checksum alone', () => {
    const key = generateApiKey('live');
    for (let i = 'tsk_live_'.length; i < key.length; i++) {
      const c = key[i] === 'a' ? 'b' : 'a';
      const typo = key.slice(0, i) + c + key.slice(i + 1);
      expect(isApiKeyFormat(typo)).toBe(false);
      expect(modeOfApiKey(typo)).toBeUndefined();
    }
    // Two keys differing only in the mode do not share a checksum either.
    expect(isApiKeyFormat(key.replace('tsk_live_', 'tsk_test_'))).toBe(false);
  });

  it('still accepts keys issued before the checksum (32 characters, no suffix)', () => {
    const legacy = `tsk_test_${'A'.repeat(31)}b`;
    expect(isApiKeyFormat(legacy)).toBe(true);
    expect(isLegacyApiKey(legacy)).toBe(true);
    expect(modeOfApiKey(legacy)).toBe('test');
    expect(isLegacyApiKey(generateApiKey('test'))).toBe(false);
    expect(apiKeyChecksum('tsk_test_x')).toMatch(/^[0-9A-Za-z]{6}$/);
  });

  it('never produces the same key twice in a thousand draws', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey('test')));
    expect(keys.size).toBe(1000);
  });

  it('uses the whole base62 alphabet', () => {
    const seen = new Set(randomBase62(20_000));
    expect(seen.size).toBe(62);
  });

  it('recognises well-formed keys and their mode, and rejects anything else', () => {
    const key = generateApiKey('live');
    expect(isApiKeyFormat(key)).toBe(true);
    expect(modeOfApiKey(key)).toBe('live');
    expect(modeOfApiKey(`${key}x`)).toBeUndefined();
    expect(modeOfApiKey(key.replace('tsk_live_', 'tsk_prod_'))).toBeUndefined();
    expect(modeOfApiKey(key.slice(0, -1) + '-')).toBeUndefined();
    expect(modeOfApiKey('')).toBeUndefined();
  });
});

describe('API key digests', () => {
  const key = generateApiKey('test');

  it('are HMAC-SHA256 hex digests: the same key and pepper give the same digest', () => {
    expect(hashApiKey(PEPPER, key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(PEPPER, key)).toBe(hashApiKey(PEPPER, key));
  });

  it('differ when the pepper differs', () => {
    expect(hashApiKey(PEPPER, key)).not.toBe(hashApiKey(OTHER_PEPPER, key));
  });

  it('differ when the key differs', () => {
    expect(hashApiKey(PEPPER, key)).not.toBe(hashApiKey(PEPPER, generateApiKey('test')));
  });

  it('compare equal only when identical, including when lengths or encodings differ', () => {
    const digest = hashApiKey(PEPPER, key);
    expect(digestsEqual(digest, hashApiKey(PEPPER, key))).toBe(true);
    expect(digestsEqual(digest, hashApiKey(OTHER_PEPPER, key))).toBe(false);
    expect(digestsEqual(digest, digest.slice(0, 62))).toBe(false);
    expect(digestsEqual(digest, 'not hex')).toBe(false);
    expect(digestsEqual('', '')).toBe(false);
  });

  it('are compared with crypto.timingSafeEqual', () => {
    const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    const spy = jest.spyOn(crypto, 'timingSafeEqual');
    const digest = hashApiKey(PEPPER, key);
    digestsEqual(digest, digest);
    expect(spy).toHaveBeenCalledTimes(1);
    spy.mockRestore();
  });
});

describe('API key records', () => {
  it('keep only the digest, a short prefix and the last four characters of the key', () => {
    const { apiKey, record } = issueApiKey({
      merchantId: 'm1',
      mode: 'test',
      allowedCidrs: ['10.0.0.0/8'],
      pepper: PEPPER,
      now: new Date('2030-01-02T03:04:05Z'),
    });
    const random = apiKey.slice('tsk_test_'.length);
    expect(record).toEqual({
      id: expect.stringMatching(/^key_[0-9A-Za-z]{20}$/),
      merchantId: 'm1',
      mode: 'test',
      digest: hashApiKey(PEPPER, apiKey),
      pepperId: pepperIdOf(PEPPER),
      prefix: `tsk_test_${random.slice(0, 4)}`,
      last4: random.slice(-4),
      allowedCidrs: ['10.0.0.0/8'],
      allowedDomains: [],
      createdAt: '2030-01-02T03:04:05.000Z',
    });
    expect(JSON.stringify(record)).not.toContain(random);
  });

  it('refuse a key whose prefix contradicts the requested mode', () => {
    expect(() =>
      buildApiKeyRecord(generateApiKey('test'), { merchantId: 'm', mode: 'live', allowedCidrs: [], pepper: PEPPER, now: new Date() }),
    ).toThrow();
  });
});

describe('API-key peppers (API_KEY_PEPPERS)', () => {
  const a = 'a'.repeat(32);
  const b = 'b'.repeat(40);

  it('lists versions newest last', () => {
    expect(parseApiKeyPeppers(`v1:${a}, v2:${b}`)).toEqual({
      ok: true,
      peppers: [
        { version: 'v1', pepper: a },
        { version: 'v2', pepper: b },
      ],
    });
  });

  it('names every bad entry by position and version, never echoing a pepper', () => {
    const short = 'short-pepper-value';
    const parsed = parseApiKeyPeppers(`${a},v1:${short},v2:${a},v2:${b},v3:${a}`);
    expect(parsed).toEqual({
      ok: false,
      problems: [
        'entry 1 must be version:pepper, the version 1-16 characters of A-Z a-z 0-9 _ -',
        'entry 2 (version "v1"): the pepper must be at least 32 characters',
        'entry 4: version "v2" is listed more than once',
        'entry 5 (version "v3"): the same pepper is listed twice',
      ],
    });
    expect(JSON.stringify(parsed)).not.toContain(short);
    expect(JSON.stringify(parsed)).not.toContain(a);
  });

  it('fingerprints a pepper without revealing it, the same way every time', () => {
    expect(pepperIdOf(a)).toMatch(/^[0-9a-f]{12}$/);
    expect(pepperIdOf(a)).toBe(pepperIdOf(a));
    expect(pepperIdOf(a)).not.toBe(pepperIdOf(b));
  });
});

describe('publishable keys (tpk_)', () => {
  it('are tpk_test_ / tpk_live_ with the same CRC32 checksum scheme as secret keys', () => {
    const key = generateApiKey('live', 'publishable');
    expect(key).toMatch(/^tpk_live_[0-9A-Za-z]{38}$/);
    expect(generateApiKey('test', 'publishable')).toMatch(/^tpk_test_[0-9A-Za-z]{38}$/);
    expect(key.slice(-6)).toBe(apiKeyChecksum(key.slice(0, -6)));
    expect(kindAndModeOfApiKey(key)).toEqual({ kind: 'publishable', mode: 'live' });
    expect(kindAndModeOfApiKey(generateApiKey('test'))).toEqual({ kind: 'secret', mode: 'test' });
  });

  it('refuse a changed character, a swapped kind prefix, and the legacy form without a checksum', () => {
    const key = generateApiKey('test', 'publishable');
    for (let i = 'tpk_test_'.length; i < key.length; i++) {
      const typo = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
      expect(isApiKeyFormat(typo)).toBe(false);
    }
    // The checksum covers the kind: a publishable key relabelled as secret is not a key.
    expect(isApiKeyFormat(key.replace('tpk_', 'tsk_'))).toBe(false);
    // Only secret keys predate the checksum.
    expect(isApiKeyFormat(`tpk_test_${'A'.repeat(32)}`)).toBe(false);
    expect(isLegacyApiKey(`tsk_test_${'A'.repeat(32)}`)).toBe(true);
  });

  it('build a record of kind publishable with its origins, recognisable by a tpk_ prefix', () => {
    const { apiKey, record } = issueApiKey({
      merchantId: 'm1',
      mode: 'test',
      kind: 'publishable',
      allowedCidrs: [],
      allowedOrigins: ['https://shop.example'],
      pepper: PEPPER,
      now: new Date('2030-01-01T00:00:00Z'),
    });
    expect(record).toMatchObject({ kind: 'publishable', allowedOrigins: ['https://shop.example'], prefix: apiKey.slice(0, 13) });
    expect(record.prefix).toMatch(/^tpk_test_/);
    expect(keyKindOf(record)).toBe('publishable');
  });

  it('leave a secret record without a kind field, read as secret, as records written before kinds existed', () => {
    const { record } = issueApiKey({ merchantId: 'm1', mode: 'test', allowedCidrs: [], pepper: PEPPER, now: new Date() });
    expect(record).not.toHaveProperty('kind');
    expect(record).not.toHaveProperty('allowedOrigins');
    expect(keyKindOf(record)).toBe('secret');
  });

  it('refuse to build a record whose key is of the other kind', () => {
    const params = { merchantId: 'm1', mode: 'test' as const, allowedCidrs: [], pepper: PEPPER, now: new Date() };
    expect(() => buildApiKeyRecord(generateApiKey('test', 'publishable'), params)).toThrow(/kind/);
    expect(() => buildApiKeyRecord(generateApiKey('test'), { ...params, kind: 'publishable' })).toThrow(/kind/);
  });
});
