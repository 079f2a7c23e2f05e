import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLogger } from '@tessera/common';
import { parseRouteDocument, type RouteDocumentInput, type RouteReader, type StoredRoute } from '@tessera/routes';
import { useRedisServer } from '@tessera/test-support';
import { keyRingEntry, keyRingOf, codeOf } from '../test/builders';
import { caKeyOf, RedisCaKeyStore } from '../store/caKeyStore';
import { countCaKeysByKekId, rewrapCaKeys } from './keyRotation';
import { MerchantCas } from './merchantCa';

jest.setTimeout(20_000);

const db = useRedisServer((url) => new Redis(url));

function routesOf(byMerchant: Record<string, RouteDocumentInput[]>): RouteReader {
  const stored = (merchantId: string): StoredRoute[] =>
    (byMerchant[merchantId] ?? []).map((r) => ({ route: parseRouteDocument(r), createdAt: '', updatedAt: '' }));
  return { list: async (m) => stored(m), get: async (m, id) => stored(m).find((s) => s.route.id === id) };
}

const outbound = (hosts: string[]): RouteDocumentInput => ({
  id: 'psp',
  kind: 'outbound',
  mode: 'live',
  outbound: { hosts },
  filters: [{ location: 'form', field: 'card[number]', store: 'number' }],
});
const inbound: RouteDocumentInput = {
  id: 'checkout',
  kind: 'inbound',
  mode: 'test',
  inbound: { host: 'pay.shop.test', upstream: 'https://shop.test/checkout' },
  filters: [{ location: 'form', field: 'card[number]', store: 'number' }],
};

const spki = (): Buffer => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' });

async function setup(routes = routesOf({ merchant_a: [outbound(['api.psp.test']), inbound] })) {
  await db.client.flushdb();
  const redis = new Redis(db.server.url);
  const store = new RedisCaKeyStore(redis, { kind: 'none' }, createLogger('vault-test', 'silent'));
  const ring = keyRingOf(keyRingEntry('k1'));
  const created: string[] = [];
  const cas = () => new MerchantCas({ store, keyRing: ring, routes, onCreated: (m) => created.push(m) });
  return { redis, store, ring, cas, created };
}

describe('the merchants’ forward-proxy CAs', () => {
  it('makes one CA per merchant on first use, kept in the store sealed, and answers the same one from another replica', async () => {
    const { redis, cas } = await setup();
    const pem = await cas().caCertificate('merchant_a');
    expect(new X509Certificate(pem).subject).toContain('CN=Tessera forward proxy CA (merchant_a)');
    const stored = JSON.parse((await redis.get(caKeyOf('merchant_a')))!) as Record<string, string>;
    expect(stored.certificatePem).toBe(pem);
    expect(Object.keys(stored).sort()).toEqual([
      'certificatePem',
      'ciphertext',
      'iv',
      'keyId',
      'tag',
      'v',
      'wrapIv',
      'wrapTag',
      'wrappedKey',
    ]);
    expect(await cas().caCertificate('merchant_a')).toBe(pem);
    expect(await cas().caCertificate('merchant_b')).not.toBe(pem);
    await redis.quit();
  });

  it('makes one CA when replicas race for a merchant’s first use: the loser answers the winner’s', async () => {
    const { redis, store, cas, created } = await setup();
    const creates = jest.spyOn(store, 'createIfAbsent');
    const answers = await Promise.all([
      cas().caCertificate('merchant_a'),
      cas().caCertificate('merchant_a'),
      cas().caCertificate('merchant_a'),
    ]);
    expect(creates.mock.calls.length).toBeGreaterThan(1);
    expect(new Set(answers).size).toBe(1);
    // Only the winner made a key that was kept.
    expect(created).toEqual(['merchant_a']);
    expect(answers[0]).toBe(JSON.parse((await redis.get(caKeyOf('merchant_a')))!).certificatePem);
    await redis.quit();
  });

  it('issues leaves signed by the stored CA for hosts of outbound routes only (inbound hosts are no PSP’s)', async () => {
    const { redis, cas } = await setup();
    const vault = cas();
    const leaf = await vault.issueHostCertificate('merchant_a', 'api.psp.test', spki());
    const ca = new X509Certificate(await vault.caCertificate('merchant_a'));
    expect(new X509Certificate(leaf.chainPem).verify(ca.publicKey)).toBe(true);
    // The chain ends with the CA, as a TLS server sends it.
    expect(leaf.chainPem.trim().endsWith(ca.toString().trim())).toBe(true);
    expect(await codeOf(vault.issueHostCertificate('merchant_a', 'pay.shop.test', spki()))).toBe('proxy_route_not_found');
    expect(await codeOf(vault.issueHostCertificate('merchant_b', 'api.psp.test', spki()))).toBe('proxy_route_not_found');
    expect(await codeOf(vault.issueHostCertificate('', 'api.psp.test', spki()))).toBe('parameter_invalid');
    await redis.quit();
  });

  it('answers internal_error, never another CA, when the stored one does not open with the configured keys', async () => {
    const { redis, cas } = await setup();
    await cas().caCertificate('merchant_a');
    // An insider copies merchant_a's CA to merchant_b: bound to merchant_a, it does not open there.
    await redis.set(caKeyOf('merchant_b'), (await redis.get(caKeyOf('merchant_a')))!);
    expect(await codeOf(cas().caCertificate('merchant_b'))).toBe('internal_error');
    // A vault with other keys cannot use it either (and makes no new one over it).
    const stranger = new MerchantCas({
      store: new RedisCaKeyStore(redis, { kind: 'none' }, createLogger('vault-test', 'silent')),
      keyRing: keyRingOf(keyRingEntry('k9')),
      routes: routesOf({}),
    });
    expect(await codeOf(stranger.caCertificate('merchant_a'))).toBe('internal_error');
    await redis.quit();
  });

  it('lists the merchants that have a CA, for rewrap', async () => {
    const { redis, store, cas } = await setup();
    await cas().caCertificate('merchant_b');
    await cas().caCertificate('merchant_a');
    expect(await store.merchants()).toEqual(['merchant_a', 'merchant_b']);
    await redis.quit();
  });

  it('moves every CA to a new KEK with rewrap, after which the CA and its leaves work with the new key alone', async () => {
    const { redis, store } = await setup();
    const k1 = keyRingEntry('k1');
    const k2 = keyRingEntry('k2');
    const routes = routesOf({ merchant_a: [outbound(['api.psp.test'])] });
    const before = new MerchantCas({ store, keyRing: keyRingOf(k1), routes });
    const pems = [await before.caCertificate('merchant_a'), await before.caCertificate('merchant_b')];
    expect(await countCaKeysByKekId(store)).toEqual({ byKeyId: { k1: 2 }, unreadable: 0 });
    expect(await rewrapCaKeys(store, keyRingOf(k1, k2))).toEqual({ rewrapped: 2, alreadyCurrent: 0, failed: 0 });
    expect(await rewrapCaKeys(store, keyRingOf(k1, k2))).toEqual({ rewrapped: 0, alreadyCurrent: 2, failed: 0 });
    expect(await countCaKeysByKekId(store)).toEqual({ byKeyId: { k2: 2 }, unreadable: 0 });
    const after = new MerchantCas({ store, keyRing: keyRingOf(k2), routes });
    expect([await after.caCertificate('merchant_a'), await after.caCertificate('merchant_b')]).toEqual(pems);
    const leaf = await after.issueHostCertificate('merchant_a', 'api.psp.test', spki());
    expect(new X509Certificate(leaf.chainPem).verify(new X509Certificate(pems[0]!).publicKey)).toBe(true);
    // One that does not open is counted, left as it is, and fails the run (the CLI exits 1).
    await redis.set(caKeyOf('merchant_c'), (await redis.get(caKeyOf('merchant_a')))!);
    expect(await rewrapCaKeys(store, keyRingOf(k2, keyRingEntry('k3')))).toEqual({ rewrapped: 2, alreadyCurrent: 0, failed: 1 });
    await redis.quit();
  });
});
