import crypto from 'node:crypto';
import type { KeyMode } from '@tessera/common';
import { signCompletionCall, signFormSessionReturn, type FormSessionCompletion } from '@tessera/sdk';
import type { PageLocale } from './currencies';
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

/**
 * What the merchant's server signed into the session (it created it with its secret key): the
 * charge and how the page presents it. The shopper's browser never sends any of it.
 */
export interface FormSessionPaymentTerms {
  /** In the currency's minor units (cents), > 0. */
  amount: number;
  /** ISO 4217, lower case (domain/currencies.ts). */
  currency: string;
  /**
   * The merchant's endpoint Tessera calls, server to server, with each card before the redirect
   * (docs/api.md, "The completion call"); null: the page only collects the card, as before.
   */
  completionUrl: string | null;
}

export interface FormSessionDisplay {
  merchantName: string | null;
  logoUrl: string | null;
  /** The button's text; null: "Pay <amount>" (or "Pay") in the page's locale. */
  submitLabel: string | null;
  locale: PageLocale;
}

/**
 * The payment's state on a session with a completion URL. `processing` while Tessera waits for
 * the merchant's answer; `declined` (the session stays open for another card); `succeeded`; and
 * `unknown` when the answer never came or made no sense (timeout, non-2xx, malformed): the
 * merchant may have charged, so the session takes no further card (never a second charge) and the
 * merchant settles it from its own records (the attempt's Idempotency-Key).
 */
export type FormSessionPaymentStatus = 'processing' | 'succeeded' | 'declined' | 'unknown';

export interface FormSessionPayment {
  status: FormSessionPaymentStatus;
  /** Cards sent to the completion URL so far. */
  attempts: number;
  /** The merchant's decline message as the page showed it (declined only). */
  declineMessage: string | null;
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
  /** Absent on sessions created before amounts existed: read as null. */
  terms?: FormSessionPaymentTerms | null;
  /** Absent on sessions created before display fields existed: read as DEFAULT_DISPLAY. */
  display?: FormSessionDisplay;
  /** Only for sessions with a completion URL once a card was sent to it. */
  payment?: FormSessionPayment | null;
}

export const DEFAULT_DISPLAY: FormSessionDisplay = { merchantName: null, logoUrl: null, submitLabel: null, locale: 'en' };

/** Cards one session may send to the merchant's completion URL (declines retried in the same session). */
export const MAX_PAYMENT_ATTEMPTS = 5;
/** The merchant's decline message is shown to the shopper: at most this many characters of it. */
export const MAX_DECLINE_MESSAGE_LENGTH = 200;

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
export function signedReturnLocation(
  secret: string,
  url: string,
  sessionId: string,
  status: 'completed' | 'canceled',
  now: Date,
  payment?: 'succeeded' | 'unknown',
): string {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const unsigned = new URL(returnLocation(url, { session: sessionId, status, ...(payment ? { payment } : {}), timestamp }));
  return returnLocation(unsigned.href, { signature: signFormSessionReturn(secret, unsigned) });
}

/**
 * The hosted page's policy: its one script and style by hash, nothing fetched, never framed, and
 * the form may submit only to this origin, whose 303 may then go only to the session's own return
 * or cancel origin (browsers apply form-action to the redirect of a form submission too).
 */
export function hostedPageCsp(input: {
  scriptHash: string;
  styleHash: string;
  redirectOrigins: readonly string[];
  /** The merchant's logo's origin: the one image source (none without a logo). */
  imageOrigin?: string | undefined;
}): string {
  const targets = [...new Set(input.redirectOrigins)].join(' ');
  return [
    "default-src 'none'",
    `script-src ${input.scriptHash}`,
    `style-src ${input.styleHash}`,
    ...(input.imageOrigin !== undefined ? [`img-src ${input.imageOrigin}`] : []),
    `form-action 'self'${targets === '' ? '' : ` ${targets}`}`,
    // The page's script fetches a proof-of-work challenge from /pay/{id}/challenge when the shop is under card-testing attack.
    "connect-src 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The completion call's body and its `Tessera-Signature` header (the SDK's verifyCompletionSignature
 * checks it), signed with the merchant's form signing secret of the session's mode.
 */
export function signedCompletionCall(secret: string, call: FormSessionCompletion, now: Date): { body: string; signature: string } {
  const body = JSON.stringify(call);
  return { body, signature: signCompletionCall(secret, body, Math.floor(now.getTime() / 1000)) };
}

export type CompletionAnswer = { outcome: 'succeeded' } | { outcome: 'declined'; message: string } | { outcome: 'unknown'; reason: string };

/** A decline message as the page may show it: plain text on one line, cut to MAX_DECLINE_MESSAGE_LENGTH; never empty. */
function declineMessageOf(raw: unknown): string {
  // Control characters are exactly what must go: the message is the merchant's, shown to a shopper.
  // eslint-disable-next-line no-control-regex
  const text = typeof raw === 'string' ? raw.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim() : '';
  if (text === '') return 'Your card was declined. Try another card.';
  return text.length > MAX_DECLINE_MESSAGE_LENGTH ? `${text.slice(0, MAX_DECLINE_MESSAGE_LENGTH - 1)}…` : text;
}

/**
 * What the merchant's completion endpoint answered, read strictly: only a 200 with
 * `{"outcome":"succeeded"}` or `{"outcome":"declined"}` is an outcome; anything else (another
 * status, another body) is `unknown`, which ends the session's attempts: the merchant may have charged.
 */
export function readCompletionAnswer(status: number, body: string): CompletionAnswer {
  if (status !== 200) return { outcome: 'unknown', reason: `status ${status}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { outcome: 'unknown', reason: 'body is not JSON' };
  }
  const outcome = (parsed as { outcome?: unknown } | null)?.outcome;
  if (outcome === 'succeeded') return { outcome: 'succeeded' };
  if (outcome === 'declined') return { outcome: 'declined', message: declineMessageOf((parsed as { message?: unknown }).message) };
  return { outcome: 'unknown', reason: 'no known outcome' };
}
