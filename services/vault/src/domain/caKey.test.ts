import { createPrivateKey } from 'node:crypto';
import { keyRingEntry, keyRingOf } from '../test/builders';
import { EnvelopeOpenError } from './aesGcm';
import { caKeyKekId, openCaKey, rewrapCaKey, sealCaKey } from './caKey';
import { createCaCertificate } from './hostCertificates';

async function aSealedCa(merchantId = 'merchant_a') {
  const k1 = keyRingEntry('k1');
  const ring = keyRingOf(k1);
  const ca = await createCaCertificate(merchantId, new Date());
  const pkcs8 = Buffer.from(ca.privateKeyPkcs8);
  return { k1, ring, ca, pkcs8, stored: sealCaKey(ring, merchantId, ca.certificatePem, ca.privateKeyPkcs8) };
}

const openError = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof EnvelopeOpenError) return err.reason;
    throw err;
  }
  return 'opened';
};

describe('the stored forward-proxy CA', () => {
  it('opens to the same certificate and private key, and holds the key only sealed', async () => {
    const { ring, ca, pkcs8, stored } = await aSealedCa();
    const opened = openCaKey(ring, 'merchant_a', stored);
    expect(opened.certificatePem).toBe(ca.certificatePem);
    expect(opened.privateKeyPkcs8.equals(pkcs8)).toBe(true);
    expect(createPrivateKey({ key: opened.privateKeyPkcs8, format: 'der', type: 'pkcs8' }).asymmetricKeyType).toBe('ec');
    expect(stored).not.toContain(pkcs8.toString('base64'));
    expect(stored).not.toContain('PRIVATE KEY');
    expect(caKeyKekId(stored)).toBe('k1');
  });

  it('does not open for another merchant: the merchant and "ca" are bound in', async () => {
    const { ring, stored } = await aSealedCa('merchant_a');
    expect(openError(() => openCaKey(ring, 'merchant_b', stored))).toBe('authentication_failed');
  });

  it('does not open with another certificate beside the key', async () => {
    const { ring, stored } = await aSealedCa();
    const other = await createCaCertificate('merchant_a', new Date());
    const swapped = JSON.stringify({ ...JSON.parse(stored), certificatePem: other.certificatePem });
    expect(openError(() => openCaKey(ring, 'merchant_a', swapped))).toBe('authentication_failed');
  });

  it('moves to a new KEK with rewrap, opening then without the old one', async () => {
    const { k1, ring, pkcs8, stored } = await aSealedCa();
    expect(rewrapCaKey(ring, 'merchant_a', stored)).toBeNull();
    const k2 = keyRingEntry('k2');
    const next = rewrapCaKey(keyRingOf(k1, k2), 'merchant_a', stored)!;
    expect(caKeyKekId(next)).toBe('k2');
    expect(openCaKey(keyRingOf(k2), 'merchant_a', next).privateKeyPkcs8.equals(pkcs8)).toBe(true);
    expect(openError(() => openCaKey(keyRingOf(k2), 'merchant_a', stored))).toBe('unknown_key');
    // A record of another merchant is never re-wrapped into a valid one.
    expect(() => rewrapCaKey(keyRingOf(k1, k2), 'merchant_b', stored)).toThrow(EnvelopeOpenError);
  });

  it('refuses a record that is not one', () => {
    const ring = keyRingOf(keyRingEntry('k1'));
    expect(openError(() => openCaKey(ring, 'merchant_a', '{"v":1}'))).toBe('malformed');
    expect(openError(() => openCaKey(ring, 'merchant_a', 'not json'))).toBe('malformed');
  });
});
