import { createCipheriv, randomBytes } from 'node:crypto';
import type { DirectEnvelope, EnvelopeContext } from '../domain/envelope';
import type { EnvKeyRing } from '../domain/keyRing';

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
