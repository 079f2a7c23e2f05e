import 'reflect-metadata';
import { generateKeyPairSync, X509Certificate as NodeCertificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { TesseraError } from '@tessera/common';
import {
  checkedHostName,
  createCaCertificate,
  importCaSigningKey,
  importLeafPublicKey,
  issueLeafCertificate,
  LEAF_MAX_VALIDITY_MS,
  routeHostMatches,
} from './hostCertificates';

const NOW = new Date('2026-11-26T12:00:00.000Z');

const spkiOf = (type: 'ec' | 'rsa', namedCurve = 'P-256'): Buffer =>
  (type === 'ec' ? generateKeyPairSync('ec', { namedCurve }) : generateKeyPairSync('rsa', { modulusLength: 2048 })).publicKey.export({
    type: 'spki',
    format: 'der',
  });

async function codeOf(promise: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (err) {
    if (err instanceof TesseraError) return `${err.code}:${err.param ?? ''}`;
    throw err;
  }
  return 'ok';
}

async function aLeaf(host = 'api.psp.test') {
  const ca = await createCaCertificate('merchant_a', NOW);
  const issued = await issueLeafCertificate({
    caCertificatePem: ca.certificatePem,
    caSigningKey: await importCaSigningKey(ca.privateKeyPkcs8),
    host,
    publicKey: await importLeafPublicKey(spkiOf('ec')),
    now: NOW,
  });
  const [leafPem, caPem] = issued.chainPem.split(/(?<=-----END CERTIFICATE-----)\n+/).filter((p) => p.trim() !== '');
  return { ca, issued, leafPem: leafPem!, caPem: caPem! };
}

describe('the merchant CA certificate', () => {
  it('is a self-signed CA for leaves only (pathLen 0, keyCertSign and cRLSign), named for the merchant, for 10 years', async () => {
    const { certificatePem } = await createCaCertificate('merchant_a', NOW);
    const cert = new x509.X509Certificate(certificatePem);
    expect(cert.subject).toBe('CN=Tessera forward proxy CA (merchant_a), O=Tessera');
    expect(cert.issuer).toBe(cert.subject);
    expect(await cert.verify({ signatureOnly: true })).toBe(true);
    const basic = cert.getExtension(x509.BasicConstraintsExtension)!;
    expect({ ca: basic.ca, pathLength: basic.pathLength, critical: basic.critical }).toEqual({ ca: true, pathLength: 0, critical: true });
    const usage = cert.getExtension(x509.KeyUsagesExtension)!;
    expect(usage.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(usage.critical).toBe(true);
    expect(cert.notAfter.getUTCFullYear()).toBe(2036);
    expect((cert.publicKey.algorithm as { namedCurve?: string }).namedCurve).toBe('P-256');
  });
});

describe('a leaf certificate', () => {
  it('names the host alone, for serverAuth and digitalSignature, from an hour ago for 7 days, with a random 16-byte serial', async () => {
    const { leafPem, caPem, issued } = await aLeaf();
    const leaf = new x509.X509Certificate(leafPem);
    expect(leaf.getExtension(x509.SubjectAlternativeNameExtension)!.names.toJSON()).toEqual([{ type: 'dns', value: 'api.psp.test' }]);
    expect(leaf.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    expect(leaf.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(leaf.getExtension(x509.BasicConstraintsExtension)!.ca).toBe(false);
    expect(leaf.notBefore.getTime()).toBe(NOW.getTime() - 3600 * 1000);
    expect(leaf.notAfter.getTime()).toBe(NOW.getTime() + LEAF_MAX_VALIDITY_MS);
    expect(issued.notAfter).toEqual(leaf.notAfter);
    expect(leaf.serialNumber).toMatch(/^[0-9a-f]{32}$/);
    expect(new x509.X509Certificate((await aLeaf()).leafPem).serialNumber).not.toBe(leaf.serialNumber);
    expect(leaf.issuer).toBe(new x509.X509Certificate(caPem).subject);
    // Node's own X.509 code agrees: signed by the CA, valid for the host and no other.
    const nodeLeaf = new NodeCertificate(leafPem);
    expect(nodeLeaf.verify(new NodeCertificate(caPem).publicKey)).toBe(true);
    expect(nodeLeaf.checkHost('api.psp.test')).toBe('api.psp.test');
    expect(nodeLeaf.checkHost('other.psp.test')).toBeUndefined();
  });

  it('is not signed by another merchant’s CA', async () => {
    const { leafPem } = await aLeaf();
    const other = await createCaCertificate('merchant_b', NOW);
    expect(new NodeCertificate(leafPem).verify(new NodeCertificate(other.certificatePem).publicKey)).toBe(false);
  });

  it('is made only for an ECDSA P-256 public key', async () => {
    expect(await codeOf(importLeafPublicKey(spkiOf('rsa')))).toBe('parameter_invalid:public_key_spki');
    expect(await codeOf(importLeafPublicKey(spkiOf('ec', 'P-384')))).toBe('parameter_invalid:public_key_spki');
    expect(await codeOf(importLeafPublicKey(Buffer.from('not a key')))).toBe('parameter_invalid:public_key_spki');
  });
});

describe('host names', () => {
  it.each([
    ['api.stripe.com', 'api.stripe.com', true],
    ['api.stripe.com', 'API.stripe.com'.toLowerCase(), true],
    ['api.stripe.com', 'files.stripe.com', false],
    ['*.adyen.com', 'checkout.adyen.com', true],
    ['*.adyen.com', 'adyen.com', false],
    ['*.adyen.com', 'a.b.adyen.com', false],
    ['*.adyen.com', 'evil-adyen.com', false],
    ['*.adyen.com', 'xadyen.com', false],
    ['localhost', 'localhost', true],
  ])('a route host %s covers %s: %s', (pattern, host, covered) => {
    expect(routeHostMatches(pattern, host)).toBe(covered);
  });

  it('takes one DNS name, case folded, and refuses addresses, ports, wildcards and junk', async () => {
    expect(checkedHostName('API.PSP.test')).toBe('api.psp.test');
    for (const host of [
      '',
      '127.0.0.1',
      '[::1]',
      'api.psp.test:443',
      '*.psp.test',
      'psp',
      'a..b.test',
      'a_b.test',
      `${'a'.repeat(64)}.test`,
    ]) {
      expect({ host, code: await codeOf(() => checkedHostName(host)) }).toEqual({ host, code: 'parameter_invalid:host' });
    }
  });
});
