import { createHash } from 'node:crypto';

/** A challenge as GET /v1/browser/challenge and GET /pay/{id}/challenge answer it (ALTCHA v1). */
export interface ProofOfWorkChallenge {
  algorithm: string;
  challenge: string;
  maxnumber?: number;
  salt: string;
  signature: string;
  required?: boolean;
}

/**
 * Solves a challenge as a card tester's script would (native SHA-256, one core): the solution to
 * send (a base64 ALTCHA payload) and the hashes it took, the work the challenge cost.
 */
export function solveProofOfWork(c: ProofOfWorkChallenge): { solution: string; hashes: number } {
  const maxnumber = c.maxnumber ?? 1_000_000;
  for (let n = 0; n <= maxnumber; n++) {
    if (
      createHash('sha256')
        .update(c.salt + n)
        .digest('hex') === c.challenge
    ) {
      const payload = { algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature };
      return { solution: Buffer.from(JSON.stringify(payload)).toString('base64'), hashes: n + 1 };
    }
  }
  throw new Error('no solution up to maxnumber: not a challenge of this format');
}
