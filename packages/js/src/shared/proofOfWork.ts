/**
 * The browser's side of the card-testing proof of work (docs/browser.md, "Card testing"): while a
 * key is under card-testing pressure the gateway asks for the solution of an ALTCHA challenge
 * (v1 format) with each card. Solving is a search for n ≤ maxnumber with SHA-256(salt + n) equal
 * to the challenge. Web Crypto's digest is asynchronous, so hashes are asked for in batches rather
 * than awaited one by one. (A SHA-256 in plain script was no faster in Chromium: measured, about
 * 40 hashes/ms against Web Crypto's 50, so the browser's own is used.)
 */

/** A challenge as GET /v1/browser/challenge and GET /pay/{id}/challenge answer it. */
export interface ProofOfWorkChallenge {
  algorithm: string;
  challenge: string;
  maxnumber: number;
  salt: string;
  signature: string;
  /** Whether the key is under pressure now: a card sent without the solution would be refused. */
  required: boolean;
}

const BATCH = 500;

/** The challenge's shape, checked before any of it is used. */
export function parseChallenge(value: unknown): ProofOfWorkChallenge | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const ok =
    v.algorithm === 'SHA-256' &&
    typeof v.challenge === 'string' &&
    /^[0-9a-f]{64}$/.test(v.challenge) &&
    typeof v.salt === 'string' &&
    typeof v.signature === 'string' &&
    typeof v.maxnumber === 'number' &&
    Number.isSafeInteger(v.maxnumber) &&
    v.maxnumber > 0;
  return ok ? (v as unknown as ProofOfWorkChallenge) : undefined;
}

function hex(buffer: ArrayBuffer): string {
  let out = '';
  for (const byte of new Uint8Array(buffer)) out += byte.toString(16).padStart(2, '0');
  return out;
}

/**
 * The solution to send (base64 of the ALTCHA payload: algorithm, challenge, number, salt,
 * signature), or undefined when no number up to maxnumber solves it.
 */
export async function solveChallenge(challenge: ProofOfWorkChallenge): Promise<string | undefined> {
  // Web Crypto exists only in secure contexts (https, or loopback in development).
  if (typeof crypto === 'undefined' || crypto.subtle === undefined) return undefined;
  const encoder = new TextEncoder();
  for (let start = 0; start <= challenge.maxnumber; start += BATCH) {
    const numbers: number[] = [];
    for (let n = start; n < start + BATCH && n <= challenge.maxnumber; n++) numbers.push(n);
    const digests = await Promise.all(numbers.map((n) => crypto.subtle.digest('SHA-256', encoder.encode(challenge.salt + n))));
    const found = digests.findIndex((digest) => hex(digest) === challenge.challenge);
    if (found >= 0) {
      const { algorithm, salt, signature } = challenge;
      return btoa(JSON.stringify({ algorithm, challenge: challenge.challenge, number: numbers[found], salt, signature }));
    }
  }
  return undefined;
}
