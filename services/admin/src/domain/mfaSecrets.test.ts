import {
  decryptTotpSecret,
  deriveAdminSecretKeys,
  encryptTotpSecret,
  findRecoveryCode,
  issueDeviceToken,
  newRecoveryCodes,
  recoveryCodeDigest,
  verifyDeviceToken,
} from './mfaSecrets';
import { base32Encode } from './totp';

const keys = deriveAdminSecretKeys('a-pepper-of-at-least-32-characters-xx');
const otherKeys = deriveAdminSecretKeys('another-pepper-of-32-characters-yyyyy');

describe('TOTP secrets at rest', () => {
  it('seals the secret so that neither its bytes nor its base32 appear, and opens it for the same operator only', () => {
    const secret = Buffer.from('12345678901234567890');
    const sealed = encryptTotpSecret(keys, 'op_1', secret);
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(secret.toString('base64url'));
    expect(sealed).not.toContain(base32Encode(secret));
    expect(decryptTotpSecret(keys, 'op_1', sealed)).toEqual(secret);
    expect(decryptTotpSecret(keys, 'op_2', sealed)).toBeUndefined();
    expect(decryptTotpSecret(otherKeys, 'op_1', sealed)).toBeUndefined();
    // The ciphertext's first base64url character: all six of its bits are data (the last
    // character of a part may carry padding bits that decoding ignores).
    const [version, iv, ciphertext, tag] = sealed.split('.') as [string, string, string, string];
    const flipped = (ciphertext.startsWith('A') ? 'B' : 'A') + ciphertext.slice(1);
    expect(decryptTotpSecret(keys, 'op_1', [version, iv, flipped, tag].join('.'))).toBeUndefined();
    expect(decryptTotpSecret(keys, 'op_1', 'garbage')).toBeUndefined();
  });
});

describe('recovery codes', () => {
  it('makes 10 distinct codes of 50 bits, and each digest matches only its own code and operator', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const digests = codes.map((c) => recoveryCodeDigest(keys, 'op_1', c));
    expect(digests.join()).not.toContain(codes[0]);
    expect(findRecoveryCode(keys, 'op_1', codes[3] ?? '', digests)).toBe(3);
    expect(findRecoveryCode(keys, 'op_1', (codes[3] ?? '').toUpperCase().replace('-', ' '), digests)).toBe(3);
    expect(findRecoveryCode(keys, 'op_2', codes[3] ?? '', digests)).toBe(-1);
    expect(findRecoveryCode(otherKeys, 'op_1', codes[3] ?? '', digests)).toBe(-1);
    expect(findRecoveryCode(keys, 'op_1', 'aaaaa-aaaaa', digests)).toBe(-1);
    expect(findRecoveryCode(keys, 'op_1', '', digests)).toBe(-1);
  });
});

describe('trusted-device tokens', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const token = issueDeviceToken(keys, { operatorId: 'op_1', credentialsVersion: 2, now, ttlSeconds: 3600 });

  it('names a device for the operator and credentials version it was issued for, until it expires', () => {
    expect(verifyDeviceToken(keys, token, { operatorId: 'op_1', credentialsVersion: 2, now })).toMatch(/^[\w-]{12}$/);
    expect(verifyDeviceToken(keys, token, { operatorId: 'op_2', credentialsVersion: 2, now })).toBeUndefined();
    expect(verifyDeviceToken(keys, token, { operatorId: 'op_1', credentialsVersion: 3, now })).toBeUndefined();
    const later = new Date(now.getTime() + 3601_000);
    expect(verifyDeviceToken(keys, token, { operatorId: 'op_1', credentialsVersion: 2, now: later })).toBeUndefined();
  });

  it('refuses a forged or altered token', () => {
    expect(verifyDeviceToken(otherKeys, token, { operatorId: 'op_1', credentialsVersion: 2, now })).toBeUndefined();
    const [payload, mac] = token.split('.');
    const forged = Buffer.from(
      Buffer.from(payload ?? '', 'base64url')
        .toString()
        .replace('.2.', '.9.'),
    ).toString('base64url');
    expect(verifyDeviceToken(keys, `${forged}.${mac}`, { operatorId: 'op_1', credentialsVersion: 9, now })).toBeUndefined();
    expect(verifyDeviceToken(keys, undefined, { operatorId: 'op_1', credentialsVersion: 2, now })).toBeUndefined();
  });
});
