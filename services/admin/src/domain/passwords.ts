import crypto from 'node:crypto';

/**
 * Operator passwords are hashed with scrypt (memory-hard, in node:crypto, no native add-on) at the
 * OWASP Password Storage Cheat Sheet's minimum for scrypt: N = 2^17, r = 8, p = 1 (128 MiB, a few
 * hundred ms per hash). The parameters are stored with each hash, so hashes made at the earlier
 * N = 2^15 keep verifying and are re-hashed at the current cost on the next successful sign-in.
 */
export const SCRYPT = { N: 131072, r: 8, p: 1, keyLength: 32, saltLength: 16 } as const;
/** scrypt needs 128 * N * r bytes; node refuses more than `maxmem` (32 MiB by default). */
const MAX_MEMORY = 256 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 12;
/** scrypt's cost does not depend on the length, but a bound keeps request bodies and memory small. */
export const MAX_PASSWORD_LENGTH = 256;

/** Why a new password is not acceptable, or undefined when it is. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}

function scrypt(password: string, salt: Buffer, params: { N: number; r: number; p: number; keyLength: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    crypto.scrypt(
      password.normalize('NFC'),
      salt,
      params.keyLength,
      { N: params.N, r: params.r, p: params.p, maxmem: MAX_MEMORY },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

/** `scrypt$N$r$p$salt$hash` (base64url): self-describing, so old hashes keep verifying after a change of cost. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(SCRYPT.saltLength);
  const key = await scrypt(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const HASH_PATTERN = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Constant-time check of a password against a stored hash; a malformed hash never verifies. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = HASH_PATTERN.exec(stored);
  if (!match) return false;
  const [, n, r, p, saltText, keyText] = match;
  const expected = Buffer.from(keyText ?? '', 'base64url');
  const params = { N: Number(n), r: Number(r), p: Number(p), keyLength: expected.length };
  if (expected.length < 16 || params.N > 1 << 20 || params.r > 32 || params.p > 16) return false;
  if (128 * params.N * params.r * params.p >= MAX_MEMORY) return false;
  try {
    const actual = await scrypt(password, Buffer.from(saltText ?? '', 'base64url'), params);
    return crypto.timingSafeEqual(actual, expected);
  } catch {
    // Parameters node refuses (N not a power of two...): a hash we did not make.
    return false;
  }
}

/** True when a (verified) hash was made at a lower cost than today's: re-hash it while the password is at hand. */
export function needsRehash(stored: string): boolean {
  const match = HASH_PATTERN.exec(stored);
  if (!match) return true;
  const [, n, r, p] = match;
  return Number(n) < SCRYPT.N || Number(r) < SCRYPT.r || Number(p) < SCRYPT.p;
}

let dummyHash: Promise<string> | undefined;

/**
 * A hash to verify against when the account does not exist, so that "no such operator" takes as
 * long as "wrong password" and response timing does not reveal which emails have accounts.
 */
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(crypto.randomBytes(16).toString('base64url'));
  return dummyHash;
}
