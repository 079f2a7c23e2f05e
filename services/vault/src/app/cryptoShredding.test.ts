import { Redis } from 'ioredis';
import { createLogger } from '@tessera/common';
import { RedisEventStore, RedisShredOrderStore, type ShredOrder } from '@tessera/merchant-data';
import { useRedisServer } from '@tessera/test-support';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aVault, anEmptyRedisCardStore, codeOf, keyRingEntry, keyRingOf } from '../test/builders';
import { runShredOrders } from './cryptoShredding';
import { run } from '../cli/vault';
import { MerchantKeyRings } from './merchantKeys';
import { MerchantCas } from './merchantCa';
import { caKeyOf, RedisCaKeyStore } from '../store/caKeyStore';

jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const A = { merchantId: 'merchant_a', mode: 'test' };
const B = { merchantId: 'merchant_b', mode: 'test' };
const rootEntry = keyRingEntry('r1');
const root = keyRingOf(rootEntry);
const operator = (n: number) => ({ id: `op_${n}`, email: `op${n}@example.com` });

let store: RedisCardStore;
beforeEach(async () => {
  store = await anEmptyRedisCardStore(db);
});
afterEach(async () => {
  await store.close();
});

function setUp() {
  const rings = new MerchantKeyRings({ root, store });
  const vault = aVault({ store, keyRing: root, merchantKeys: rings });
  const orders = new RedisShredOrderStore(db.client);
  const events = new RedisEventStore(db.client);
  const caStore = new RedisCaKeyStore(db.client, { kind: 'none' }, createLogger('vault-test', 'silent'));
  // CA certificates only: no leaf is asked for here, so no route is needed.
  const cas = new MerchantCas({ store: caStore, keyRing: root, routes: { list: async () => [], get: async () => undefined } });
  const deps = {
    store,
    keks: store,
    rings,
    cas: caStore,
    caCache: cas,
    orders,
    recorder: events,
    now: () => new Date(),
    logger: createLogger('vault-test', 'silent'),
  };
  return { vault, orders, events, deps, cas };
}

/** An order as the admin service leaves it after the second operator's approval (app/shredOrders.ts there). */
async function approvedOrder(orders: RedisShredOrderStore, merchantId: string, mode: ShredOrder['mode']): Promise<ShredOrder> {
  const order = await orders.create({ merchantId, mode, reason: 'contract ended', requestedBy: operator(1) }, new Date());
  const found = await orders.get(order.id);
  const approved: ShredOrder = { ...order, status: 'approved', approvedBy: operator(2), approvedAt: new Date().toISOString() };
  expect(await orders.replace(found?.raw as string, approved, true)).toBe(true);
  return approved;
}

async function keysOf(pattern: string): Promise<string[]> {
  return (await db.client.keys(pattern)).sort();
}

describe('carrying out approved shred orders', () => {
  it("destroys the merchant's key, sweeps every record of it (CVV, aliases, fingerprint index) and records merchant.shredded", async () => {
    const { vault, orders, events, deps } = setUp();
    const a = await vault.tokenize(aCard({ aliasFormats: ['uuid'], dedupe: true }));
    const b = await vault.tokenize(aCard({ merchantId: 'merchant_b', aliasFormats: ['uuid'], dedupe: true }));
    const order = await approvedOrder(orders, 'merchant_a', 'all');

    expect(await runShredOrders(deps)).toBe(1);

    expect(await keysOf(`*${a.token}*`)).toEqual([]);
    expect(await keysOf('tessera:card:alias:{m:merchant_a}*')).toEqual([]);
    expect(await db.client.get(`tessera:card:fp:{${a.fingerprint}}`)).toBeNull();
    expect(await keysOf('tessera:card:kek:{m:merchant_a}*')).toEqual([]);
    expect(await codeOf(vault.getToken(A, a.token))).toBe('token_not_found');
    // merchant_b keeps everything, its alias included.
    expect((await vault.render(B, b.aliases.uuid as string, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');

    const done = (await orders.get(order.id))?.order;
    expect(done).toMatchObject({ status: 'done', tokensSwept: 1 });
    expect(done?.keyDestroyedAt).toBeDefined();
    for (const mode of ['test', 'live'] as const) {
      const { data } = await events.list('merchant_a', mode, { type: 'merchant.shredded', limit: 10 });
      expect(data.map((e) => e.data.object)).toEqual([
        { id: order.id, keyDestroyedAt: Math.floor(Date.parse(done?.keyDestroyedAt as string) / 1000), tokensSwept: 1 },
      ]);
    }
    expect(await orders.nextQueued()).toBeNull();
  });

  it('shreds one mode only when asked: the other mode of the merchant keeps working', async () => {
    const { vault, orders, deps } = setUp();
    const test = (await vault.tokenize(aCard())).token;
    const live = (await vault.tokenize(aCard({ number: '4000056655665556', mode: 'live' }))).token;
    await approvedOrder(orders, 'merchant_a', 'test');
    await runShredOrders(deps);
    expect(await codeOf(vault.getToken(A, test))).toBe('token_not_found');
    expect((await vault.getToken({ merchantId: 'merchant_a', mode: 'live' }, live)).token).toBe(live);
  });

  it("deletes the merchant's forward-proxy CA with mode all (its key is under the root ring), and keeps it for one mode", async () => {
    const { orders, deps, cas } = setUp();
    const before = await cas.caCertificate('merchant_a');
    await cas.caCertificate('merchant_b');

    await approvedOrder(orders, 'merchant_a', 'test');
    await runShredOrders(deps);
    expect(await db.client.get(caKeyOf('merchant_a'))).not.toBeNull();

    await approvedOrder(orders, 'merchant_a', 'all');
    await runShredOrders(deps);
    expect(await db.client.get(caKeyOf('merchant_a'))).toBeNull();
    expect(await db.client.get(caKeyOf('merchant_b'))).not.toBeNull();
    // The shredding replica dropped the opened key too: the merchant's next use makes a new CA.
    const after = await cas.caCertificate('merchant_a');
    expect(after).not.toBe(before);
  });

  it('never carries out an order that is on the queue without an approval', async () => {
    const { vault, orders, deps } = setUp();
    const token = (await vault.tokenize(aCard())).token;
    const order = await orders.create({ merchantId: 'merchant_a', mode: 'all', reason: 'x', requestedBy: operator(1) }, new Date());
    // An insider pushing the id onto the queue does not make it approved.
    await db.client.lpush('tessera:shred:{tessera-shred}:queue', order.id);
    expect(await runShredOrders(deps)).toBe(0);
    expect((await vault.getToken(A, token)).token).toBe(token);
    expect((await orders.get(order.id))?.order.status).toBe('pending');
    expect(await orders.nextQueued()).toBeNull();
  });

  it('resumes an order whose key was destroyed before the vault stopped, without destroying the new key', async () => {
    const { vault, orders, deps } = setUp();
    const old = (await vault.tokenize(aCard())).token;
    const order = await approvedOrder(orders, 'merchant_a', 'test');
    const found = await orders.get(order.id);
    // As a vault that destroyed the key and then stopped would have left it:
    await store.shredMerchantKek('merchant_a', 'test', new Date().toISOString());
    deps.rings.forget('merchant_a', 'test');
    const shredding: ShredOrder = { ...order, status: 'shredding', keyDestroyedAt: new Date().toISOString() };
    await orders.replace(found?.raw as string, shredding);
    // The merchant's new life started meanwhile.
    const reborn = (await vault.tokenize(aCard({ number: '5555555555554444' }))).token;

    await runShredOrders(deps);
    expect(await db.client.get(`tessera:card:{${old}}`)).toBeNull();
    expect((await orders.get(order.id))?.order.status).toBe('done');
    // The sweep removes the records of before the shred only: the new key and its token are left.
    expect(await db.client.get('tessera:card:kek:{m:merchant_a}:test')).not.toBeNull();
    expect((await vault.getToken(A, reborn)).token).toBe(reborn);
  });
});

describe('npm run vault -- shred', () => {
  it('carries out the approved orders and prints how many, nothing else', async () => {
    const { vault, orders, cas } = setUp();
    const token = (await vault.tokenize(aCard())).token;
    await cas.caCertificate('merchant_a');
    await approvedOrder(orders, 'merchant_a', 'all');
    const stdout: string[] = [];
    const stderr: string[] = [];
    const env = { NODE_ENV: 'test', REDIS_URL: db.server.url, VAULT_KEYS: rootEntry };
    expect(await run(['shred'], env, { out: (l) => stdout.push(l), err: (l) => stderr.push(l) })).toBe(0);
    expect(stdout).toEqual(['{"carriedOut":1}']);
    expect(await db.client.get(`tessera:card:{${token}}`)).toBeNull();
    expect(await codeOf(vault.getToken(A, token))).toBe('token_not_found');
    expect(await db.client.get(caKeyOf('merchant_a'))).toBeNull();
  });
});
