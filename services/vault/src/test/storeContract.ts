import type { StoredCard, StoredCvv } from '../domain/card';
import type { CardStore } from '../store/cardStore';

export function aStoredCard(overrides: Partial<StoredCard> = {}): StoredCard {
  return {
    merchantId: 'merchant_a',
    last4: '4242',
    brand: 'visa',
    expiryMonth: 4,
    expiryYear: 2030,
    createdAt: '2025-01-01T00:00:00.000Z',
    expiresAt: '2030-05-31T12:00:00.000Z',
    holderNameAvailable: true,
    sealed: { keyId: 'k1', iv: 'aXY=', ciphertext: 'Y2lwaGVy', tag: 'dGFn' },
    ...overrides,
  };
}

export const aStoredCvv = (): StoredCvv => ({ sealed: { keyId: 'k1', iv: 'aXY=', ciphertext: 'Y3Z2', tag: 'dGFn' } });

/** Behaviour every CardStore implementation must share; run against memory and real Redis. */
export function describeCardStoreContract(name: string, open: () => CardStore, token: () => string): void {
  describe(`${name} (CardStore contract)`, () => {
    let store: CardStore;
    beforeEach(() => {
      store = open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('returns what was saved, card and CVV separately', async () => {
      const t = token();
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } });
      expect(await store.getCard(t)).toEqual(aStoredCard());
      expect(await store.getCvv(t)).toEqual(aStoredCvv());
      expect(await store.hasCvv(t)).toBe(true);
    });

    it('saves a card without a CVV', async () => {
      const t = token();
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000 });
      expect(await store.getCard(t)).toEqual(aStoredCard());
      expect(await store.getCvv(t)).toBeNull();
      expect(await store.hasCvv(t)).toBe(false);
    });

    it('answers null for unknown tokens', async () => {
      expect(await store.getCard(token())).toBeNull();
      expect(await store.delete(token())).toBe(false);
    });

    it('deletes the card and its CVV together', async () => {
      const t = token();
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } });
      expect(await store.delete(t)).toBe(true);
      expect(await store.getCard(t)).toBeNull();
      expect(await store.getCvv(t)).toBeNull();
      expect(await store.delete(t)).toBe(false);
    });

    it('reports itself healthy', async () => {
      expect((await store.ping()).ok).toBe(true);
    });
  });
}
