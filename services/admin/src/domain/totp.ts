import crypto from 'node:crypto';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP) as every authenticator app speaks
 * them: HMAC-SHA-1, 6 digits, 30-second steps. node:crypto has everything needed, so no library.
 */
export const TOTP = { digits: 6, stepSeconds: 30, algorithm: 'sha1', secretBytes: 20 } as const;
/** RFC 6238 §5.2: accept one step either side, for clock drift and a code typed at the edge of its step. */
export const TOTP_DRIFT_STEPS = 1;

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding: the form authenticator apps expect in otpauth:// URIs. */
export function base32Encode(data: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of data) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Tolerates lower case, spaces and padding (people copy secrets by hand); undefined when not base32. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32_ALPHABET.indexOf(char);
    if (index === -1) return undefined;
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export function newTotpSecret(): Buffer {
  return crypto.randomBytes(TOTP.secretBytes);
}

/** RFC 4226 §5.3: HMAC of the 8-byte counter, dynamic truncation, modulo 10^digits. */
export function hotp(secret: Buffer, counter: number, digits: number = TOTP.digits, algorithm: string = TOTP.algorithm): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = crypto.createHmac(algorithm, secret).update(message).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP.stepSeconds);
}

export function totp(secret: Buffer, nowMs: number, digits: number = TOTP.digits, algorithm: string = TOTP.algorithm): string {
  return hotp(secret, totpStep(nowMs), digits, algorithm);
}

export const TOTP_CODE_PATTERN = /^\d{6}$/;

/**
 * The time step a code belongs to (within ±1 step of now), or undefined. A step at or before
 * `lastUsedStep` never matches: a code, once accepted, cannot be replayed, nor can an older one.
 */
export function matchTotp(secret: Buffer, code: string, nowMs: number, lastUsedStep: number | undefined): number | undefined {
  const presented = code.replace(/\s/g, '');
  if (!TOTP_CODE_PATTERN.test(presented)) return undefined;
  const current = totpStep(nowMs);
  let matched: number | undefined;
  // Every candidate is computed and compared in constant time, so timing does not tell which step matched.
  for (let step = current - TOTP_DRIFT_STEPS; step <= current + TOTP_DRIFT_STEPS; step++) {
    const equal = crypto.timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(presented));
    if (equal && matched === undefined && (lastUsedStep === undefined || step > lastUsedStep)) matched = step;
  }
  return matched;
}

/** The otpauth:// URI (Google Authenticator key-URI format) that apps import, as text or QR code. */
export function otpauthUri(params: { issuer: string; account: string; secret: Buffer }): string {
  const label = `${encodeURIComponent(params.issuer)}:${encodeURIComponent(params.account)}`;
  const query = new URLSearchParams({
    secret: base32Encode(params.secret),
    issuer: params.issuer,
    algorithm: 'SHA1',
    digits: String(TOTP.digits),
    period: String(TOTP.stepSeconds),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}
