import crypto from 'node:crypto';
import { clientNetworkOf } from './rateLimit';

/**
 * The proof of work of browser tokenization under card-testing pressure (docs/browser.md, "Card
 * testing"). A refusal per key would let anyone who spends a key's budget lock its merchant's
 * shoppers out; instead, while a key is under pressure, every tokenization must carry the solution
 * of an ALTCHA challenge (find n with SHA-256(salt + n) = challenge, n ≤ maxnumber), whose cost
 * grows with the key's volume and with the refusals of the address asking. A shopper pays one
 * solve per card; a card tester pays it per card tried, more the harder it pushes.
 */

export interface ChallengeDifficultyConfig {
  /** BROWSER_TOKENS_PER_KEY_PER_MINUTE: the key's volume from which work is demanded; 0: never. */
  threshold: number;
  /** BROWSER_CHALLENGE_BASE_NUMBER: maxnumber at the threshold for an address with no refusals. */
  base: number;
  /** BROWSER_CHALLENGE_MAX_NUMBER: the ceiling, so a shopper's solve stays bounded however hard the attack. */
  max: number;
}

/** Past this many refusals an address's factor stops doubling (the ceiling has long been reached). */
const MAX_REFUSAL_DOUBLINGS = 16;

/**
 * The maxnumber a challenge for this key and address gets: `base` times the key's volume in
 * thresholds (1 at the threshold, 2 at twice it, …), doubled per refusal the address has had this
 * hour, capped at `max`. Expected work is half of it. Below the threshold a challenge is not
 * required, but one asked for still gets the base difficulty (with the address's factor).
 */
export function challengeMaxNumber(keyVolume: number, addressRefusals: number, config: ChallengeDifficultyConfig): number {
  const thresholds = config.threshold > 0 ? Math.max(1, Math.floor(keyVolume / config.threshold)) : 1;
  const refusalFactor = 2 ** Math.min(Math.max(0, addressRefusals), MAX_REFUSAL_DOUBLINGS);
  return Math.max(1, Math.min(config.max, config.base * thresholds * refusalFactor));
}

/** Whether a tokenization must carry a solved challenge: the key's volume reached the threshold, or its attack mark is set. */
export function isUnderPressure(keyVolume: number, attackMarked: boolean, threshold: number): boolean {
  return threshold > 0 && (attackMarked || keyVolume >= threshold);
}

/** Set while a key is under attack (for BROWSER_ATTACK_COOLDOWN_SECONDS from when it was set): challenges stay on, the dashboard says so. */
export function browserAttackMarkBucket(keyId: string): string {
  return `browser:attack:${keyId}`;
}

/** An address's refusals by the card-testing limits in the hour; each doubles its challenges. */
export function browserRefusalsBucket(clientIp: string | undefined): string {
  return `browser:refusals:${clientNetworkOf(clientIp)}`;
}

/** A solved challenge, once spent: the signature is unique per challenge (it signs a random salt). */
export function spentChallengeBucket(signature: string): string {
  return `browser:challenge-spent:${signature}`;
}

/**
 * The challenge HMAC key: BROWSER_CHALLENGE_HMAC_KEY when set, else derived from the gateway's
 * server secret for this one purpose (like the card fingerprint key), so every replica agrees
 * without another secret to distribute.
 */
export function challengeHmacKey(configured: string | undefined, serverSecret: string): string {
  return configured ?? crypto.createHmac('sha256', serverSecret).update('tessera/browser-challenge/v1').digest('hex');
}

/**
 * What a challenge is bound to, carried in its salt (which the challenge hash, and so the
 * signature, covers): the key it was issued for and the address's network (hashed: the salt is
 * read by the browser and logged by proxies). A solution for another key or from another network
 * is refused, so work done from a clean address cannot be spent by a misbehaving one.
 */
export interface ChallengeBinding {
  keyId: string;
  network: string;
}

export function challengeBindingOf(keyId: string, clientIp: string | undefined, hmacKey: string): ChallengeBinding {
  const network = crypto.createHmac('sha256', hmacKey).update(clientNetworkOf(clientIp)).digest('base64url').slice(0, 16);
  return { keyId, network };
}

/**
 * As salt parameters (altcha-lib `params`), with the maxnumber the challenge is issued with as `d`.
 * altcha-lib signs the salt but not the challenge's own `maxnumber`, so the difficulty is known at
 * spending time only from here: a solution whose `d` is below what is required by then was bought
 * cheap at a quiet moment and is refused (signedMaxNumber), and a `d` changed by the client breaks
 * the challenge hash.
 */
export function challengeParams(binding: ChallengeBinding, maxnumber: number): Record<string, string> {
  return { k: binding.keyId, n: binding.network, d: String(maxnumber) };
}

/** The maxnumber a verified solution's challenge was issued with; 0 when its salt carries none. */
export function signedMaxNumber(params: Record<string, string>): number {
  const d = Number(params.d);
  return Number.isSafeInteger(d) && d > 0 ? d : 0;
}

/** Whether a verified solution's salt parameters name this binding. */
export function matchesBinding(params: Record<string, string>, binding: ChallengeBinding): boolean {
  return params.k === binding.keyId && params.n === binding.network;
}

/** The solution header of POST /v1/browser/tokens (a base64 ALTCHA payload), and the hosted page's form field. */
export const CHALLENGE_SOLUTION_HEADER = 'x-tessera-challenge';
export const CHALLENGE_SOLUTION_FIELD = 'challenge';
