import crypto from 'node:crypto';
import { TesseraError, type KeyMode } from '@tessera/common';

/**
 * CVC sessions: the grant a merchant's server (secret key) opens for one token so that the
 * CVC-only browser field (tessera.cvcField) may attach one CVC to it, once, within minutes. A
 * publishable key is public, so without a grant anyone holding it could overwrite the CVV of any
 * of the merchant's tokens (issue 22, finding 2). Rules only, no I/O.
 */

/** `cvcs_` + 256 random bits: the bearer secret the page hands to tessera.cvcField. */
export const CVC_SESSION_SECRET_PATTERN = /^cvcs_[A-Za-z0-9_-]{43}$/;
/** How long after expiry a used or expired session is still recognised (answered 410, not 404). */
export const CVC_SESSION_RETENTION_MS = 3600 * 1000;

export interface CvcSessionRecord {
  /** SHA-256 of the secret: the store never holds the secret itself. */
  digest: string;
  merchantId: string;
  mode: KeyMode;
  token: string;
  /** The secret key that opened it (for the audit of who granted what). */
  keyId: string;
  createdAt: string;
  expiresAt: string;
}

/** What one attempt to take the grant for an attach found; `claimed` is the only success. */
export type CvcSessionClaim = 'claimed' | 'not_found' | 'used' | 'expired';

export function newCvcSessionSecret(): string {
  return `cvcs_${crypto.randomBytes(32).toString('base64url')}`;
}

/**
 * The secret as stored. An unkeyed hash is enough: the secret is 256 random bits, so nothing can
 * be guessed from its digest, and a copy of Redis gives no usable grant.
 */
export function cvcSessionDigest(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('base64url');
}

export interface CvcSessionTarget {
  merchantId: string;
  mode: KeyMode;
  token: string;
}

/** The refusal the browser sees for a grant that could not be taken. */
export function cvcSessionRefusal(claim: Exclude<CvcSessionClaim, 'claimed'>): TesseraError {
  if (claim === 'used') return new TesseraError('cvc_session_used');
  if (claim === 'expired') return new TesseraError('cvc_session_expired');
  return new TesseraError('cvc_session_not_found');
}
