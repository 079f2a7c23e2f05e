import crypto from 'node:crypto';
import type { KeyMode } from '@tessera/common';
import { signFormSessionReturn } from '@tessera/sdk';
import { returnLocation } from './returnUrls';

/**
 * Form sessions: the hosted payment page (the spec's "form-based integration", docs/browser.md).
 * A merchant's server opens one with a secret key; the shopper's browser fills it once on the
 * fields origin and is sent back to a registered URL with a signed result. Rules only, no I/O.
 */

export const FORM_SESSION_ID_PATTERN = /^fs_[A-Za-z0-9_-]{32}$/;
/** How long after expiry a finished or expired session can still be read (GET answers `expired`, the page 410). */
export const FORM_SESSION_RETENTION_MS = 24 * 3600 * 1000;

export type FormSessionStatus = 'open' | 'completed' | 'expired' | 'canceled';

export interface FormSessionResult {
  token: string;
  card: { brand: string; last4: string; expiryMonth: number; expiryYear: number };
}

export interface FormSessionRecord {
  id: string;
  merchantId: string;
  mode: KeyMode;
  keyId: string;
  returnUrl: string;
  cancelUrl: string | null;
  /** The per-session CSRF token the page's form carries. */
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
  /** As stored: `expired` is never stored, it is `open` past expiresAt. */
  status: 'open' | 'completed' | 'canceled';
  finishedAt: string | null;
  result: FormSessionResult | null;
}

export function newFormSessionId(): string {
  return `fs_${crypto.randomBytes(24).toString('base64url')}`;
}

export function newCsrfToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** The status a reader sees. */
export function formSessionStatus(record: Pick<FormSessionRecord, 'status' | 'expiresAt'>, now: Date): FormSessionStatus {
  if (record.status !== 'open') return record.status;
  return now.getTime() >= Date.parse(record.expiresAt) ? 'expired' : 'open';
}

/** Constant-time comparison of the form's CSRF token with the session's. */
export function csrfTokenMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  const a = crypto.createHash('sha256').update(presented).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

/**
 * The merchant's return-signing secret, one per merchant and mode, derived from the deployment's
 * API-key pepper (HMAC with a label of its own, so it reveals nothing about the pepper or other
 * merchants' secrets). Derived rather than stored: the gateway, every replica and the CLI agree on
 * it with no extra state; it changes only with the pepper.
 */
export function formSigningSecret(pepper: string, merchantId: string, mode: KeyMode): string {
  const mac = crypto.createHmac('sha256', pepper).update(`tessera form-session return v1\0${merchantId}\0${mode}`).digest('base64url');
  return `fss_${mode}_${mac}`;
}

/**
 * Where the shopper is sent when the session ends: its return (or cancel) URL with the merchant's
 * own query kept, the outcome and the time set, and a signature over the whole URL, every query
 * parameter included (the SDK's formSessionReturnPayload, which verifyFormSessionReturn checks), so
 * a shopper cannot change `order=42&amount=1` on the way back.
 */
export function signedReturnLocation(secret: string, url: string, sessionId: string, status: 'completed' | 'canceled', now: Date): string {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const unsigned = new URL(returnLocation(url, { session: sessionId, status, timestamp }));
  return returnLocation(unsigned.href, { signature: signFormSessionReturn(secret, unsigned) });
}

/**
 * The hosted page's policy: its one script and style by hash, nothing fetched, never framed, and
 * the form may submit only to this origin, whose 303 may then go only to the session's own return
 * or cancel origin (browsers apply form-action to the redirect of a form submission too).
 */
export function hostedPageCsp(input: { scriptHash: string; styleHash: string; redirectOrigins: readonly string[] }): string {
  const targets = [...new Set(input.redirectOrigins)].join(' ');
  return [
    "default-src 'none'",
    `script-src ${input.scriptHash}`,
    `style-src ${input.styleHash}`,
    `form-action 'self'${targets === '' ? '' : ` ${targets}`}`,
    // The page's script fetches a proof-of-work challenge from /pay/{id}/challenge when the shop is under card-testing attack.
    "connect-src 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
