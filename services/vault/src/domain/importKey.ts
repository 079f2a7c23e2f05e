import { openpgp, type PrivateKey, type PublicKey } from './openpgp';
import { EnvelopeOpenError } from './aesGcm';
import type { KeyRing } from './keyRing';

/**
 * Each import has its own OpenPGP key pair (docs/adr/0015-card-import.md): the old provider
 * encrypts its file to the public half; the private half is kept like the fingerprint key, wrapped
 * under the key ring's current KEK (so an HSM ring holds it too), and destroyed when the import ends.
 */
export type ImportKeyType = 'curve25519' | 'rsa4096';

export interface ImportKeyPair {
  publicKey: string;
  /** The armored private key wrapped under the key ring; see sealImportPrivateKey. */
  sealedPrivateKey: string;
  fingerprint: string;
}

interface StoredSealed {
  v: 1;
  keyId: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

function importKeyAad(importId: string, keyId: string): Buffer {
  return Buffer.from(`tessera.import-key.v1|${importId}|${keyId}`, 'utf8');
}

function outcomesAad(importId: string, batch: number, keyId: string): Buffer {
  return Buffer.from(`tessera.import-outcomes.v1|${importId}|${batch}|${keyId}`, 'utf8');
}

function seal(ring: KeyRing, plaintext: Buffer, aad: (keyId: string) => Buffer): string {
  const keyId = ring.currentKeyId;
  const stored: StoredSealed = { v: 1, keyId, ...ring.wrap(keyId, plaintext, aad(keyId)) };
  return JSON.stringify(stored);
}

function open(ring: KeyRing, text: string, aad: (keyId: string) => Buffer): Buffer {
  let value: Partial<StoredSealed>;
  try {
    value = JSON.parse(text) as Partial<StoredSealed>;
  } catch {
    throw new EnvelopeOpenError('malformed');
  }
  const { v, keyId, iv, ciphertext, tag } = value;
  if (v !== 1 || typeof keyId !== 'string' || typeof iv !== 'string' || typeof ciphertext !== 'string' || typeof tag !== 'string') {
    throw new EnvelopeOpenError('malformed');
  }
  return ring.unwrap(keyId, { iv, ciphertext, tag }, aad(keyId));
}

export async function generateImportKeyPair(ring: KeyRing, importId: string, type: ImportKeyType): Promise<ImportKeyPair> {
  const userIDs = [{ name: `Tessera import ${importId}` }];
  const generated =
    type === 'rsa4096'
      ? await openpgp.generateKey({ type: 'rsa', rsaBits: 4096, userIDs, format: 'object' })
      : // curve25519Legacy: a version 4 key every deployed gpg reads (the v6 curve25519 needs gpg 2.5).
        await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs, format: 'object' });
  const armoredPrivate = Buffer.from(generated.privateKey.armor(), 'utf8');
  try {
    return {
      publicKey: generated.publicKey.armor(),
      sealedPrivateKey: seal(ring, armoredPrivate, (keyId) => importKeyAad(importId, keyId)),
      fingerprint: generated.publicKey.getFingerprint().toUpperCase(),
    };
  } finally {
    armoredPrivate.fill(0);
  }
}

export async function openImportPrivateKey(ring: KeyRing, importId: string, sealed: string): Promise<PrivateKey> {
  const armored = open(ring, sealed, (keyId) => importKeyAad(importId, keyId));
  try {
    return await openpgp.readPrivateKey({ armoredKey: armored.toString('utf8') });
  } finally {
    armored.fill(0);
  }
}

/** A batch of report rows (old id -> token) sealed under the key ring until the report is written. */
export function sealOutcomes(ring: KeyRing, importId: string, batch: number, rows: string): string {
  return seal(ring, Buffer.from(rows, 'utf8'), (keyId) => outcomesAad(importId, batch, keyId));
}

export function openOutcomes(ring: KeyRing, importId: string, batch: number, sealed: string): string {
  return open(ring, sealed, (keyId) => outcomesAad(importId, batch, keyId)).toString('utf8');
}

/** The recipient's armored public key, refused unless it can encrypt (the report is useless otherwise). */
export async function readRecipientKey(armored: string): Promise<PublicKey> {
  const key = await openpgp.readKey({ armoredKey: armored });
  if (key.isPrivate()) throw new Error('the report recipient key must be a public key, not a private one');
  await key.getEncryptionKey();
  return key;
}
