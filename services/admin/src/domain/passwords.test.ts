import crypto from 'node:crypto';
import { dummyPasswordHash, hashPassword, needsRehash, passwordProblem, verifyPassword } from './passwords';

// scrypt at N = 2^17 takes a second or more on a loaded machine.
jest.setTimeout(60_000);

describe('operator passwords', () => {
  it('verifies the password it hashed and nothing else', async () => {
    const hash = await hashPassword('correct horse battery');
    // OWASP Password Storage Cheat Sheet minimum for scrypt: N = 2^17, r = 8, p = 1.
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain('correct');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('keeps verifying a hash made at the old cost (N = 2^15) and asks for it to be re-hashed', async () => {
    const salt = crypto.randomBytes(16);
    const key = crypto.scryptSync('an-old-operator-pw', salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const old = ['scrypt', 32768, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
    expect(await verifyPassword('an-old-operator-pw', old)).toBe(true);
    expect(needsRehash(old)).toBe(true);
    expect(needsRehash(await hashPassword('an-old-operator-pw'))).toBe(false);
  });

  it('salts every hash, so equal passwords give different hashes', async () => {
    const [a, b] = await Promise.all([hashPassword('same password here'), hashPassword('same password here')]);
    expect(a).not.toBe(b);
  });

  it('treats canonically equal Unicode spellings as the same password', async () => {
    const hash = await hashPassword('caf\u00e9-password-1');
    expect(await verifyPassword('cafe\u0301-password-1', hash)).toBe(true);
  });

  it.each(['', 'plain', 'scrypt$1$8$1$c2FsdA$a2V5', 'scrypt$4194304$8$1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5'])(
    'never verifies against a malformed or too costly hash (%s)',
    async (stored) => {
      expect(await verifyPassword('anything-at-all', stored)).toBe(false);
    },
  );

  it('has a dummy hash that no ordinary password verifies against', async () => {
    expect(await verifyPassword('correct horse battery', await dummyPasswordHash())).toBe(false);
  });

  it('asks for 12 to 256 characters', () => {
    expect(passwordProblem('short')).toMatch(/at least 12/);
    expect(passwordProblem('x'.repeat(257))).toMatch(/at most 256/);
    expect(passwordProblem('twelve chars')).toBeUndefined();
  });
});
