// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { secureRandomBytes, TesseraError } from '@tessera/common';

/**
 * The forward proxy's certificates (ADR 0013, point 4): one CA per merchant, which the merchant's
 * clients trust, and short-lived leaf certificates it signs for the PSP hosts on the merchant's
 * outbound routes. ECDSA P-256 with SHA-256 throughout, through Node's WebCrypto.
 */

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** A WebCrypto key (Node's): the CA's signing key, a leaf's public key. */
export type CryptoKey = webcrypto.CryptoKey;

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { ...EC_P256, hash: 'SHA-256' } as const;

/** The CA lives as long as a merchant's trust store is expected to: replaced by rotation (docs/SECURITY.md), not by expiry. */
export const CA_VALIDITY_YEARS = 10;
/** At most a week: a leaf a gateway leaked stops working soon, and the gateway renews well before (it knows not_after). */
export const LEAF_MAX_VALIDITY_MS = 7 * 24 * 3600 * 1000;
/** Clients whose clocks run behind the vault's still accept a leaf made a moment ago. */
export const LEAF_BACKDATE_MS = 3600 * 1000;

/** 16 random bytes, the top bit clear so the DER INTEGER stays positive (RFC 5280 4.1.2.2). */
function randomSerial(): string {
  const bytes = secureRandomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/** The CA's subject: names the merchant so a certificate viewer shows whose it is. */
export function caSubject(merchantId: string): x509.JsonName {
  return [{ CN: [`Tessera forward proxy CA (${merchantId})`] }, { O: ['Tessera'] }];
}

/** A new CA: its self-signed certificate (PEM) and private key (PKCS#8 DER: the caller seals and zeroes it). */
export async function createCaCertificate(merchantId: string, now: Date): Promise<{ certificatePem: string; privateKeyPkcs8: Buffer }> {
  const keys = (await webcrypto.subtle.generateKey(SIGNING, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CA_VALIDITY_YEARS);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: new x509.Name(caSubject(merchantId)),
    notBefore: new Date(now.getTime() - LEAF_BACKDATE_MS),
    notAfter,
    signingAlgorithm: SIGNING,
    keys,
    extensions: [
      // pathLen 0: it signs leaves only, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const privateKeyPkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { certificatePem: certificate.toString('pem'), privateKeyPkcs8 };
}

/** The CA's signing key, not extractable: what the vault keeps in memory between leaves. */
export function importCaSigningKey(privateKeyPkcs8: Buffer): Promise<CryptoKey> {
  return webcrypto.subtle.importKey('pkcs8', privateKeyPkcs8, EC_P256, false, ['sign']) as Promise<CryptoKey>;
}

/** The caller's public key, if it is an ECDSA P-256 SubjectPublicKeyInfo; parameter_invalid otherwise. */
export async function importLeafPublicKey(spki: Uint8Array): Promise<CryptoKey> {
  try {
    return (await webcrypto.subtle.importKey('spki', spki, EC_P256, true, ['verify'])) as CryptoKey;
  } catch {
    throw new TesseraError('parameter_invalid', {
      param: 'public_key_spki',
      message: 'public_key_spki must be an ECDSA P-256 public key as DER SubjectPublicKeyInfo.',
    });
  }
}

export interface IssuedLeaf {
  /** The leaf, then the CA: the chain a TLS server sends. */
  chainPem: string;
  notAfter: Date;
}

/**
 * A leaf for one DNS name: SAN dNSName = host (and CN, for old clients' logs), serverAuth only,
 * digitalSignature (ECDHE key exchange signs with it), valid from an hour ago for at most
 * LEAF_MAX_VALIDITY_MS and never past the CA.
 */
export async function issueLeafCertificate(options: {
  caCertificatePem: string;
  caSigningKey: CryptoKey;
  host: string;
  publicKey: CryptoKey;
  now: Date;
}): Promise<IssuedLeaf> {
  const ca = new x509.X509Certificate(options.caCertificatePem);
  const wanted = options.now.getTime() + LEAF_MAX_VALIDITY_MS;
  const notAfter = new Date(Math.min(wanted, ca.notAfter.getTime()));
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: new x509.Name([{ CN: [options.host] }]),
    issuer: ca.subjectName,
    notBefore: new Date(options.now.getTime() - LEAF_BACKDATE_MS),
    notAfter,
    signingAlgorithm: SIGNING,
    publicKey: options.publicKey,
    signingKey: options.caSigningKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: options.host }]),
      await x509.AuthorityKeyIdentifierExtension.create(ca, false),
    ],
  });
  // X.509 keeps whole seconds: the answer says what the certificate says.
  return { chainPem: `${leaf.toString('pem')}\n${options.caCertificatePem}\n`, notAfter: leaf.notAfter };
}

/** A DNS name as a leaf may carry it: lower-case LDH labels, at least two or `localhost`; no IP address, port or wildcard. */
const DNS_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$|^localhost$/;

/** The host as asked (case folded), if it is a DNS name a certificate may be issued for; parameter_invalid otherwise. */
export function checkedHostName(host: string): string {
  const name = host.toLowerCase();
  if (name.length > 253 || !DNS_NAME.test(name)) {
    throw new TesseraError('parameter_invalid', { param: 'host', message: 'host must be one DNS name, without port or wildcard.' });
  }
  return name;
}

/**
 * Whether a route's host (`api.stripe.com`, or `*.adyen.com`: exactly one label in place of the
 * star, as RFC 6125 6.4.3 has clients match wildcard certificates) covers `host`.
 */
export function routeHostMatches(routeHost: string, host: string): boolean {
  const pattern = routeHost.toLowerCase();
  if (!pattern.startsWith('*.')) return pattern === host;
  const suffix = pattern.slice(1);
  if (!host.endsWith(suffix)) return false;
  const label = host.slice(0, -suffix.length);
  return label.length > 0 && !label.includes('.');
}
