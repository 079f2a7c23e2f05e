import { Redis } from 'ioredis';
import { isMerchantKekId } from '../domain/merchantKeys';
import { cardKey, merchantKekKey } from '../store/records';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aVault, anEmptyRedisCardStore, codeOf, keyRingEntry, keyRingOf, readRecord } from '../test/builders';
import { useRedisServer } from '@tessera/test-support';
import { destroyMerchantKeys } from './cryptoShredding';
import { REWRAP_CHECKPOINT, rewrapAll } from './keyRotation';
import { MERCHANT_KEK_CACHE_MS, MERCHANT_KEK_MAX_STALE_MS, MerchantKeyRings, type MerchantKekStore } from './merchantKeys';
import { TesseraError } from '@tessera/common';
import type { RecordAlarm } from './vault';

jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const A = { merchantId: 'merchant_a', mode: 'test' };
const B = { merchantId: 'merchant_b', mode: 'test' };
const root = keyRingOf(keyRingEntry('r1'));

let store: RedisCardStore;
beforeEach(async () => {
  store = await anEmptyRedisCardStore(db);
});
afterEach(async () => {
  await store.close();
});

/** One vault replica: its own cache of merchant keys, on its own clock. */
function aReplica(clock: () => number = () => 0, alarms: RecordAlarm[] = []) {
  const rings = new MerchantKeyRings({ root, store, clock });
  return { rings, vault: aVault({ store, keyRing: root, merchantKeys: rings, onAlarm: (a) => alarms.push(a) }) };
}

async function keyIdOf(token: string): Promise<string> {
  return ((await readRecord(db.client, cardKey(token))) as { sealed: { keyId: string } }).sealed.keyId;
}

describe('per-merchant keys in the vault', () => {
  it("wraps each merchant's data keys under its own key, made on first use and stored in the merchant's slot", async () => {
    const { vault } = aReplica();
    const a = (await vault.tokenize(aCard())).token;
    const b = (await vault.tokenize(aCard({ merchantId: 'merchant_b' }))).token;
    const [kekA, kekB] = [await keyIdOf(a), await keyIdOf(b)];
    expect(isMerchantKekId(kekA)).toBe(true);
    expect(kekB).not.toBe(kekA);
    const stored = JSON.parse((await db.client.get(merchantKekKey('merchant_a', 'test'))) as string) as Record<string, unknown>;
    expect(stored).toMatchObject({ kekId: kekA, keyId: 'r1' });
    // A second token of the merchant reuses its key.
    expect(await keyIdOf((await vault.tokenize(aCard())).token)).toBe(kekA);
    expect((await vault.render(A, a, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
  });

  it('lets another replica read a token under a merchant key it had not loaded yet', async () => {
    const first = aReplica();
    const second = aReplica();
    // The second replica looks first, when the merchant has no key: it remembers "none".
    expect(await codeOf(second.vault.getToken(A, 'tok.AAAAAAAAAAAAAAAAAAAAAA'))).toBe('token_not_found');
    const token = (await first.vault.tokenize(aCard())).token;
    expect((await second.vault.render(A, token, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
  });

  it('makes every token of a shredded merchant answer token_not_found, without a tampering alarm, and leaves others alone', async () => {
    let now = 0;
    const alarms: RecordAlarm[] = [];
    const shredder = aReplica(() => 0, alarms);
    const other = aReplica(() => now, alarms);
    const a = (await shredder.vault.tokenize(aCard())).token;
    const b = (await shredder.vault.tokenize(aCard({ merchantId: 'merchant_b' }))).token;
    expect((await other.vault.getToken(A, a)).token).toBe(a);

    await destroyMerchantKeys({ store, keks: store, rings: shredder.rings, now: () => new Date() }, 'merchant_a', ['test']);
    expect(await db.client.get(merchantKekKey('merchant_a', 'test'))).toBeNull();
    // The replica that shredded knows at once.
    expect(await codeOf(shredder.vault.render(A, a, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    // Another replica may still use the key it holds in memory until its cache lapses: the documented bound.
    expect((await other.vault.getToken(A, a)).token).toBe(a);
    now += MERCHANT_KEK_CACHE_MS;
    expect(await codeOf(other.vault.render(A, a, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect(await codeOf(other.vault.getToken(A, a))).toBe('token_not_found');
    expect(alarms).toEqual([]);
    // The other merchant's tokens still work everywhere.
    expect((await other.vault.render(B, b, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
    // The shredded merchant and mode starts a new life under a new key.
    const reborn = (await shredder.vault.tokenize(aCard())).token;
    expect(await keyIdOf(reborn)).not.toBe(await keyIdOf(a));
    expect((await other.vault.getToken(A, reborn)).token).toBe(reborn);
  });

  it('rewrap moves a record of before merchant keys to its merchant key while reads go on', async () => {
    const before = aVault({ store, keyRing: root });
    const tokens = [];
    for (let i = 0; i < 6; i++) tokens.push((await before.tokenize(aCard())).token);
    for (const t of tokens) expect(await keyIdOf(t)).toBe('r1');
    const { rings, vault } = aReplica();
    const keks = { rings, store };
    // One small batch at a time, with reads of every token between batches: nothing stops serving.
    let step = await rewrapAll(store, root, { batchSize: 1, maxBatches: 1, merchantKeys: keks });
    while (!step.done) {
      for (const t of tokens) expect((await vault.render(A, t, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
      step = await rewrapAll(store, root, { batchSize: 1, maxBatches: 1, merchantKeys: keks });
    }
    const kek = await keyIdOf(tokens[0] as string);
    expect(isMerchantKekId(kek)).toBe(true);
    for (const t of tokens) {
      expect(await keyIdOf(t)).toBe(kek);
      expect((await vault.render(A, t, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toBe('4242424242424242/123');
    }
    // Idempotent: a second run finds everything current.
    const again = await rewrapAll(store, root, { batchSize: 10, merchantKeys: keks, restart: true });
    expect(again.checkpoint.stats).toMatchObject({ rewrapped: 0, migrated: 0, failed: 0 });
    // The root key alone no longer opens them: their data keys are under the merchant's key now.
    expect(await codeOf(before.getToken(A, tokens[0] as string))).toBe('internal_error');
  });

  it('does not resume a checkpoint of a rewrap made without merchant keys (its records before the cursor would stay on the root key)', async () => {
    const before = aVault({ store, keyRing: root });
    const token = (await before.tokenize(aCard())).token;
    await store.setCheckpoint(REWRAP_CHECKPOINT, JSON.stringify({ targetKeyId: 'r1', cursor: '12345', stats: {} }));
    const { rings } = aReplica();
    const result = await rewrapAll(store, root, { batchSize: 10, merchantKeys: { rings, store } });
    expect(result.checkpoint.stats).toMatchObject({ scanned: 1, rewrapped: 2 });
    expect(isMerchantKekId(await keyIdOf(token))).toBe(true);
  });

  it("keeps using a merchant key it holds while the merchant's slot cannot be read, for MERCHANT_KEK_MAX_STALE_MS at most", async () => {
    let now = 0;
    let down = false;
    const flaky: MerchantKekStore = {
      getMerchantKek: async (merchantId, mode) => {
        if (down) throw new TesseraError('service_unavailable');
        return store.getMerchantKek(merchantId, mode);
      },
      createMerchantKek: (m, mode, stored) => store.createMerchantKek(m, mode, stored),
      replaceMerchantKek: (m, mode, expected, next) => store.replaceMerchantKek(m, mode, expected, next),
      shredMerchantKek: (m, mode, at) => store.shredMerchantKek(m, mode, at),
      scanMerchantKeks: (cursor, count) => store.scanMerchantKeks(cursor, count),
    };
    const rings = new MerchantKeyRings({ root, store: flaky, clock: () => now });
    const vault = aVault({ store, keyRing: root, merchantKeys: rings });
    const token = (await vault.tokenize(aCard())).token;
    down = true;
    now += MERCHANT_KEK_CACHE_MS;
    expect((await vault.getToken(A, token)).token).toBe(token);
    // A merchant whose key this replica has not read yet cannot be served: 503, never a 404 or an alarm.
    const other = aReplica();
    const elsewhere = (await other.vault.tokenize(aCard({ merchantId: 'merchant_b' }))).token;
    expect(await codeOf(vault.getToken(B, elsewhere))).toBe('service_unavailable');
    now += MERCHANT_KEK_MAX_STALE_MS;
    expect(await codeOf(vault.getToken(A, token))).toBe('service_unavailable');
    down = false;
    expect((await vault.getToken(A, token)).token).toBe(token);
  });
});
