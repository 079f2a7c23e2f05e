import { createCipheriv, randomBytes } from 'node:crypto';
import type { DirectEnvelope, EnvelopeContext } from '../domain/envelope';
import type { EnvKeyRing } from '../domain/keyRing';
import type { StoredCard } from '../domain/card';

/**
 * The sealing code as it was before envelope encryption (format 1: data sealed directly under the
 * VAULT_KEYS key), kept verbatim so tests can write records exactly as deployed vaults did.
 */
export function sealFormat1(ring: EnvKeyRing, ctx: EnvelopeContext, plaintext: Buffer): DirectEnvelope {
  const keyId = ring.currentKeyId;
  const key = ring.key(keyId);
  if (key === undefined) throw new Error('no current key');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(`tessera.v1|${ctx.merchantId}|${ctx.token}|${keyId}|${ctx.kind}`, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId, iv: iv.toString('base64'), ciphertext: ciphertext.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** A stored record as the format-1 vault serialized it (`v: 1`). */
export function format1Record(fields: Record<string, unknown>): string {
  return JSON.stringify({ v: 1, ...fields });
}

/** The clear fields of a card record as versions 3-5 stored them (BIN and fingerprint: version 5 only). */
export type LegacyCardFields = Required<Pick<StoredCard, 'mode'>> &
  Omit<StoredCard, 'mode' | 'provisional' | 'metadataBound' | 'compact' | 'sealed'>;

/**
 * A card record exactly as the vaults before format 6 wrote it (JSON, base64 envelope, JSON
 * plaintext), version 3 (merchant and mode bound), 4 (every clear field bound) or 5 (4 plus BIN
 * and fingerprint). The labels and encodings are spelled out here rather than taken from the
 * current code, so a change there that stops these records from opening fails the tests.
 */
export function legacyCardRecord(
  ring: EnvKeyRing,
  token: string,
  version: 3 | 4 | 5,
  fields: LegacyCardFields,
  secret: { number: string; holderName: string },
): string {
  const keyId = ring.currentKeyId;
  const kek = ring.key(keyId);
  if (kek === undefined) throw new Error('no current key');
  const { merchantId, mode } = fields;
  const v5 = version === 5 ? [fields.bin ?? null, fields.fingerprint] : [];
  const metadata = JSON.stringify([
    'card',
    merchantId,
    mode,
    false,
    fields.last4,
    fields.brand,
    fields.expiryMonth,
    fields.expiryYear,
    fields.createdAt,
    fields.expiresAt,
    fields.holderNameAvailable,
    ...v5,
  ]);
  const [wrapAad, dataAad] =
    version === 3
      ? [`tessera.v3.dek|${merchantId}|${token}|${keyId}|card|${mode}`, `tessera.v3.data|${merchantId}|${token}|card|${mode}`]
      : [
          `tessera.v4.dek|${JSON.stringify([merchantId, token, keyId, 'card', mode, null, metadata])}`,
          `tessera.v4.data|${JSON.stringify([merchantId, token, null, 'card', mode, null, metadata])}`,
        ];
  const { bin, fingerprint, ...common } = fields;
  const stored = {
    v: version,
    ...common,
    ...(version === 5 ? { bin, fingerprint } : {}),
    sealed: sealLegacy(kek, keyId, wrapAad, dataAad, Buffer.from(JSON.stringify(secret), 'utf8')),
  };
  return JSON.stringify(stored);
}

/** A version-4 CVV record (nonce and deadline bound) exactly as the vaults before format 6 wrote it. */
export function legacyCvvRecord(
  ring: EnvKeyRing,
  token: string,
  fields: { merchantId: string; mode: 'test' | 'live'; nonce: string; expiresAt: string },
  cvv: string,
): string {
  const keyId = ring.currentKeyId;
  const kek = ring.key(keyId);
  if (kek === undefined) throw new Error('no current key');
  const { merchantId, mode, nonce, expiresAt } = fields;
  const metadata = JSON.stringify(['cvv', nonce, expiresAt]);
  const wrapAad = `tessera.v4.dek|${JSON.stringify([merchantId, token, keyId, 'cvv', mode, null, metadata])}`;
  const dataAad = `tessera.v4.data|${JSON.stringify([merchantId, token, null, 'cvv', mode, null, metadata])}`;
  return JSON.stringify({ v: 4, mode, nonce, expiresAt, sealed: sealLegacy(kek, keyId, wrapAad, dataAad, Buffer.from(cvv, 'utf8')) });
}

function sealLegacy(kek: Buffer, keyId: string, wrapAad: string, dataAad: string, plaintext: Buffer): Record<string, string> {
  const dataKey = randomBytes(32);
  const wrap = gcm(kek, wrapAad, dataKey);
  const data = gcm(dataKey, dataAad, plaintext);
  return {
    keyId,
    iv: data.iv,
    ciphertext: data.ciphertext,
    tag: data.tag,
    wrappedKey: wrap.ciphertext,
    wrapIv: wrap.iv,
    wrapTag: wrap.tag,
  };
}

function gcm(key: Buffer, aad: string, plaintext: Buffer): { iv: string; ciphertext: string; tag: string } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv: iv.toString('base64'), ciphertext: ciphertext.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}
