import type * as OpenPgp from 'openpgp' with { 'resolution-mode': 'import' };

// OpenPGP.js declares its types as an ES module but ships a CommonJS build, which this CommonJS program loads.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const openpgp = require('openpgp') as typeof OpenPgp;

/** The smallest RSA modulus taken: Stripe asks its export recipients for 4096 bits; NIST retires 2048 after 2030. */
const MIN_RSA_BITS = 3072;

export interface RecipientKeyFacts {
  /** Upper-case hex, as `gpg --fingerprint` shows it (without spaces): what the operator checks with the recipient. */
  fingerprint: string;
  /** `rsa4096`, `curve25519Legacy`, … */
  algorithm: string;
  /** The key re-armored from its packets: nothing the operator pasted around it is kept. */
  publicKey: string;
}

/**
 * Reads a recipient's armored public key as an operator pastes it. Undefined when it is not one
 * public key that can encrypt now (a private key, an expired or revoked one, signing only, a weak RSA
 * modulus): exports are encrypted to it, and a key that cannot take them must be refused at once.
 */
export async function readRecipientKey(armored: string, now: Date): Promise<RecipientKeyFacts | undefined> {
  let key: OpenPgp.Key;
  try {
    key = await openpgp.readKey({ armoredKey: armored });
  } catch {
    return undefined;
  }
  if (key.isPrivate()) return undefined;
  let encryptionKey;
  try {
    encryptionKey = await key.getEncryptionKey(undefined, now);
  } catch {
    return undefined;
  }
  const info = encryptionKey.getAlgorithmInfo() as { algorithm: string; bits?: number; curve?: string };
  if (info.bits !== undefined && info.bits < MIN_RSA_BITS) return undefined;
  const algorithm =
    info.bits !== undefined
      ? `${info.algorithm.startsWith('rsa') ? 'rsa' : info.algorithm}${info.bits}`
      : `${info.algorithm}${info.curve === undefined ? '' : `-${info.curve}`}`;
  return { fingerprint: key.getFingerprint().toUpperCase(), algorithm, publicKey: key.armor() };
}
