import { createPublicKey } from 'node:crypto';
import { TesseraError } from '@tessera/common';
import { HostCertificates } from './hostCertificates';

/** A vault that records what it was asked and answers a leaf valid until `notAfter`. */
function fakeVault(notAfter: () => Date) {
  const issued: { merchantId: string; host: string; keyType: string | undefined; curve: string | undefined }[] = [];
  let refuse: TesseraError | undefined;
  return {
    issued,
    refuseWith: (err: TesseraError | undefined) => {
      refuse = err;
    },
    issueHostCertificate: async (request: { merchantId: string; host: string; publicKeySpki: Buffer }) => {
      if (refuse) throw refuse;
      const key = createPublicKey({ key: request.publicKeySpki, format: 'der', type: 'spki' });
      issued.push({
        merchantId: request.merchantId,
        host: request.host,
        keyType: key.asymmetricKeyType,
        curve: key.asymmetricKeyDetails?.namedCurve,
      });
      return { certificateChainPem: `chain ${issued.length}`, notAfter: notAfter() };
    },
  };
}

const ctx = { requestId: 'req_1' };

describe('the forward proxy leaf certificates', () => {
  let now = new Date('2026-11-26T12:00:00Z');
  const clock = () => now;
  const inSevenDays = () => new Date(now.getTime() + 7 * 86_400_000);

  it('makes a P-256 key per merchant and host, has the vault sign it, and reuses the leaf until an hour before it expires', async () => {
    const vault = fakeVault(inSevenDays);
    const certificates = new HostCertificates(vault, { prepare: (c) => ({ chain: c.chainPem, key: c.keyPem }), now: clock });
    const first = await certificates.get('acme', 'psp.test', ctx);
    expect(first.key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(vault.issued).toEqual([{ merchantId: 'acme', host: 'psp.test', keyType: 'ec', curve: 'prime256v1' }]);
    expect(await certificates.get('acme', 'psp.test', ctx)).toBe(first);
    await certificates.get('globex', 'psp.test', ctx);
    await certificates.get('acme', 'other.test', ctx);
    expect(vault.issued).toHaveLength(3);

    now = new Date(now.getTime() + 7 * 86_400_000 - 3_600_000);
    const renewed = await certificates.get('acme', 'psp.test', ctx);
    expect(renewed).not.toBe(first);
    expect(renewed.chain).toBe('chain 4');
  });

  it('shares one issue between concurrent first uses, and does not keep a refusal', async () => {
    const vault = fakeVault(inSevenDays);
    const certificates = new HostCertificates(vault, { prepare: (c) => c.chainPem, now: clock });
    vault.refuseWith(new TesseraError('proxy_route_not_found'));
    await expect(certificates.get('acme', 'psp.test', ctx)).rejects.toMatchObject({ code: 'proxy_route_not_found' });
    vault.refuseWith(undefined);
    const [a, b] = await Promise.all([certificates.get('acme', 'psp.test', ctx), certificates.get('acme', 'psp.test', ctx)]);
    expect(a).toBe(b);
    expect(vault.issued).toHaveLength(1);
  });

  it('keeps at most maxEntries leaves, the oldest going first', async () => {
    const vault = fakeVault(inSevenDays);
    const certificates = new HostCertificates(vault, { prepare: (c) => c.chainPem, now: clock, maxEntries: 2 });
    await certificates.get('m', 'a.test', ctx);
    await certificates.get('m', 'b.test', ctx);
    await certificates.get('m', 'c.test', ctx);
    await certificates.get('m', 'c.test', ctx);
    expect(vault.issued.map((i) => i.host)).toEqual(['a.test', 'b.test', 'c.test']);
    await certificates.get('m', 'a.test', ctx);
    expect(vault.issued.map((i) => i.host)).toEqual(['a.test', 'b.test', 'c.test', 'a.test']);
  });
});
