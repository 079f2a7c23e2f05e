import crypto from 'node:crypto';

/**
 * What the dashboard's second factor keeps secret, and how. Everything is keyed by keys derived
 * with HKDF-SHA-256 from the gateway's API_KEY_PEPPER (one purpose, one `info` label), so a copy
 * of Redis alone (a backup, a replica, a compromised Redis user) holds no usable TOTP secret,
 * recovery code or trusted-device token.
 */
export interface AdminSecretKeys {
  /** AES-256-GCM key of TOTP secrets at rest. */
  totp: Buffer;
  /** HMAC key of recovery-code digests. */
  recovery: Buffer;
  /** HMAC key of trusted-device tokens. */
  device: Buffer;
}

export function deriveAdminSecretKeys(pepper: string): AdminSecretKeys {
  const derive = (info: string) => Buffer.from(crypto.hkdfSync('sha256', Buffer.from(pepper, 'utf8'), Buffer.alloc(0), info, 32));
  return {
    totp: derive('tessera admin totp secret v1'),
    recovery: derive('tessera admin recovery code v1'),
    device: derive('tessera admin trusted device v1'),
  };
}

/**
 * `v1.<iv>.<ciphertext>.<tag>` (base64url). The operator id is the additional data, so a secret
 * copied onto another operator's record does not decrypt.
 */
export function encryptTotpSecret(keys: AdminSecretKeys, operatorId: string, secret: Buffer): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', keys.totp, iv);
  cipher.setAAD(Buffer.from(operatorId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret), cipher.final()]);
  return ['v1', iv, ciphertext, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** The secret, or undefined when the record was tampered with, moved, or sealed under another pepper. */
export function decryptTotpSecret(keys: AdminSecretKeys, operatorId: string, sealed: string): Buffer | undefined {
  const [version, iv, ciphertext, tag, extra] = sealed.split('.');
  if (version !== 'v1' || iv === undefined || ciphertext === undefined || tag === undefined || extra !== undefined) return undefined;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', keys.totp, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(operatorId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  } catch {
    return undefined;
  }
}

export const RECOVERY_CODE_COUNT = 10;
/** 10 characters of a 32-letter alphabet without look-alikes: 50 bits each, typed as `xxxxx-xxxxx`. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const RECOVERY_CODE_PATTERN = /^[a-z0-9]{5}-?[a-z0-9]{5}$/;

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = '';
    for (const byte of crypto.randomBytes(10)) code += RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length];
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** Lower case, no spaces, with the dash: what the operator typed, as it was issued. */
export function normalizeRecoveryCode(input: string): string | undefined {
  const compact = input.replace(/[\s-]/g, '').toLowerCase();
  if (!/^[a-z0-9]{10}$/.test(compact)) return undefined;
  return `${compact.slice(0, 5)}-${compact.slice(5)}`;
}

/**
 * Stored instead of the code: a keyed HMAC bound to the operator. 50 random bits behind a key
 * that is not in Redis cannot be brute-forced from a copy of the store, so a slow hash adds nothing.
 */
export function recoveryCodeDigest(keys: AdminSecretKeys, operatorId: string, code: string): string {
  return crypto.createHmac('sha256', keys.recovery).update(`${operatorId}\n${code}`).digest('base64url');
}

/** The index of the matching digest, compared in constant time, or -1. */
export function findRecoveryCode(keys: AdminSecretKeys, operatorId: string, input: string, digests: readonly string[]): number {
  const code = normalizeRecoveryCode(input);
  if (code === undefined) return -1;
  const presented = Buffer.from(recoveryCodeDigest(keys, operatorId, code));
  let found = -1;
  digests.forEach((digest, index) => {
    const stored = Buffer.from(digest);
    if (stored.length === presented.length && crypto.timingSafeEqual(stored, presented) && found === -1) found = index;
  });
  return found;
}

/**
 * A browser that completed a sign-in with the second factor gets a signed device token. It names
 * the operator and the operator's credentials version, so it stops counting as soon as the
 * password or the second factor changes; it expires on its own after `ttlSeconds`.
 */
export function issueDeviceToken(
  keys: AdminSecretKeys,
  params: { operatorId: string; credentialsVersion: number; now: Date; ttlSeconds: number },
): string {
  const expires = Math.floor(params.now.getTime() / 1000) + params.ttlSeconds;
  const payload = [params.operatorId, params.credentialsVersion, expires, crypto.randomBytes(9).toString('base64url')].join('.');
  const mac = crypto.createHmac('sha256', keys.device).update(payload).digest('base64url');
  return `${Buffer.from(payload).toString('base64url')}.${mac}`;
}

/** The device's id when the token is genuine, unexpired and for this operator at this credentials version. */
export function verifyDeviceToken(
  keys: AdminSecretKeys,
  token: string | undefined,
  expected: { operatorId: string; credentialsVersion: number; now: Date },
): string | undefined {
  if (token === undefined || token.length > 512) return undefined;
  const [encoded, mac, extra] = token.split('.');
  if (encoded === undefined || mac === undefined || extra !== undefined) return undefined;
  const payload = Buffer.from(encoded, 'base64url').toString('utf8');
  const expectedMac = Buffer.from(crypto.createHmac('sha256', keys.device).update(payload).digest('base64url'));
  const presentedMac = Buffer.from(mac);
  if (presentedMac.length !== expectedMac.length || !crypto.timingSafeEqual(presentedMac, expectedMac)) return undefined;
  const [operatorId, version, expires, deviceId] = payload.split('.');
  if (operatorId !== expected.operatorId || Number(version) !== expected.credentialsVersion) return undefined;
  if (!(Number(expires) * 1000 > expected.now.getTime()) || deviceId === undefined) return undefined;
  return deviceId;
}
