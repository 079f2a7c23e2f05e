import { MemoryCardStore } from './memoryCardStore';
import { aStoredCard, aStoredCvv, describeCardStoreContract } from '../test/storeContract';
import { generateToken } from '../domain/token';

describeCardStoreContract('MemoryCardStore', () => new MemoryCardStore(), generateToken);

describe('MemoryCardStore TTLs', () => {
  it('forgets the CVV after its TTL while the card stays, then forgets the card after its own', async () => {
    let now = 1_000_000;
    const store = new MemoryCardStore({ now: () => now });
    const t = generateToken();
    await store.save({ token: t, card: aStoredCard(), cardTtlMs: 10_000, cvv: { record: aStoredCvv(), ttlMs: 3_000 } });

    now += 2_999;
    expect(await store.hasCvv(t)).toBe(true);
    now += 1;
    expect(await store.hasCvv(t)).toBe(false);
    expect(await store.getCvv(t)).toBeNull();
    expect(await store.getCard(t)).not.toBeNull();

    now += 7_000;
    expect(await store.getCard(t)).toBeNull();
    expect(store.size()).toBe(0);
    await store.close();
  });

  it('drops expired entries from memory even when nobody reads them', async () => {
    let now = 0;
    const store = new MemoryCardStore({ now: () => now });
    await store.save({ token: generateToken(), card: aStoredCard(), cardTtlMs: 10_000, cvv: { record: aStoredCvv(), ttlMs: 1_000 } });
    expect(store.size()).toBe(2);
    now = 1_000;
    expect(store.size()).toBe(1);
    await store.close();
  });

  it('keeps stored records independent of the objects passed in', async () => {
    const store = new MemoryCardStore();
    const t = generateToken();
    const card = aStoredCard();
    await store.save({ token: t, card, cardTtlMs: 10_000 });
    card.merchantId = 'someone_else';
    expect((await store.getCard(t))?.merchantId).toBe('merchant_a');
    await store.close();
  });
});
