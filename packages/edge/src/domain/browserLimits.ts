import crypto from 'node:crypto';
import { clientNetworkOf } from './rateLimit';

/**
 * Card-testing defence on browser tokenization (docs/browser.md, "Card testing"). A publishable
 * key is public, so a fraudster can drive Tessera's card fields, or the route behind them, to
 * check stolen card numbers one after another. Two limits refuse a misbehaving address: requests
 * per shopper IP (IPv6: per /64), and distinct cards per shopper IP. A key's volume refuses no
 * one: past its threshold every tokenization costs a proof of work (domain/browserChallenge.ts).
 */

/**
 * Why a browser tokenization was refused: the one label of the refusal metric (a closed set). A
 * key's volume refuses nobody: past BROWSER_TOKENS_PER_KEY_PER_MINUTE it demands a proof of work
 * (domain/browserChallenge.ts), refused as `challenge_required` without one and
 * `challenge_invalid` with a wrong, expired or spent one.
 */
export type BrowserLimitReason = 'ip' | 'distinct_cards' | 'form_session_failures' | 'challenge_required' | 'challenge_invalid';

export const BROWSER_LIMIT_REASONS: readonly BrowserLimitReason[] = [
  'ip',
  'distinct_cards',
  'form_session_failures',
  'challenge_required',
  'challenge_invalid',
];

/**
 * Card submissions one hosted-page session may have refused by the card rules before it takes no
 * more cards. The page's own script applies the same rules before it sends, so a shopper's card
 * is rarely refused by the server at all, and one who does reach the cap only has to go back to
 * the shop for a new session; a script driving the page without our script gets five guesses
 * per session, each session costing the merchant's server a call. Fixed rather than a setting:
 * no legitimate checkout needs more, and a smaller number would punish typos without JavaScript.
 */
export const FAILED_SUBMISSIONS_PER_FORM_SESSION = 5;

/** The clock minute a key's volume is counted in (minutes since the epoch, the same on every replica). */
export function volumeMinuteOf(nowMs: number): number {
  return Math.floor(nowMs / 60_000);
}

/**
 * The tokenizations a key admitted in one clock minute, its pressure (the key id, never the key).
 * Admitted only: requests refused for want of work raise nobody's difficulty. Per clock minute
 * rather than a window opened by the first hit, so the minute before is still there to read: a
 * challenge's difficulty looks back at it (BrowserTokenLimiter), else a window that has just begun
 * would price the work as if the attack had stopped.
 */
export function browserKeyBucket(keyId: string, minute: number): string {
  return `browser:key:${keyId}:${minute}`;
}

/**
 * The key's volume a challenge's difficulty follows, from its count this clock minute and the last
 * one's, `msIntoMinute` into this one. Never below the last minute's (a minute that has just begun
 * does not price the work as if the attack had stopped), and growing with this minute's from the
 * start: this minute's plus the part of the last one still within sixty seconds (a sliding
 * minute), else an attack running across the boundary would pay the last minute's price until this
 * one caught up with it.
 */
export function recentKeyVolume(current: number, previous: number, msIntoMinute: number): number {
  const previousStillInside = previous * Math.max(0, 1 - msIntoMinute / 60_000);
  return Math.max(previous, Math.round(current + previousStillInside));
}

/** Per shopper network, counted like failed authentication (one IPv6 /64 is one client). */
export function browserIpBucket(clientIp: string | undefined): string {
  return `browser:ip:${clientNetworkOf(clientIp)}`;
}

/** The refused card submissions of one hosted-page session (its id is random and not secret to the shopper). */
export function formSessionFailuresBucket(sessionId: string): string {
  return `browser:form-failures:${sessionId}`;
}

/** The set of card fingerprints one shopper network has tokenized in the current hour. */
export function distinctCardsBucket(clientIp: string | undefined): string {
  return `browser:cards:${clientNetworkOf(clientIp)}`;
}

/**
 * The key fingerprints are made with: derived from the gateway's server secret (API_KEY_PEPPER)
 * for this one purpose, so a fingerprint is never comparable with an API key digest and the
 * pepper itself is used for nothing else here.
 */
export function cardFingerprintKey(serverSecret: string): Buffer {
  return crypto.createHmac('sha256', serverSecret).update('tessera/browser-card-fingerprint/v1').digest();
}

/**
 * A keyed hash of the card number, to tell cards apart without storing them. An unkeyed hash of
 * a PAN is card data in all but name (the 10^6-ish unknown middle digits are brute-forced in
 * seconds); without the server secret this one reveals nothing. 128 bits: collisions between the
 * handful of cards one client sends per hour are out of the question.
 */
export function cardFingerprint(key: Buffer, number: string): string {
  return crypto.createHmac('sha256', key).update(number.replace(/\D/g, '')).digest('base64url').slice(0, 22);
}

/**
 * The distinct-cards decision: a card already counted in this window is always let through (a
 * shopper retrying their own card is not card testing); a new card is refused once the window
 * already holds `limit` distinct cards. 0 disables.
 */
export function isNewCardOverLimit(alreadyCounted: boolean, distinctBefore: number, limit: number): boolean {
  return limit > 0 && !alreadyCounted && distinctBefore >= limit;
}
