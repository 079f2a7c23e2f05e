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

/** A format-6 card (binary record): its envelope has the lengths a sealed record has. */
export function aCompactStoredCard(overrides: Partial<StoredCard> = {}): StoredCard {
  const bytes = (n: number, fill: number): string => Buffer.alloc(n, fill).toString('base64');
  return aStoredCard({
    mode: 'test',
    bin: '424242',
    fingerprint: Buffer.alloc(16, 7).toString('base64url'),
    metadataBound: true,
    compact: true,
    sealed: {
      keyId: 'k1',
      wrapIv: bytes(12, 1),
      wrapTag: bytes(16, 2),
      wrappedKey: bytes(32, 3),
      iv: bytes(12, 4),
      tag: bytes(16, 5),
      ciphertext: bytes(20, 6),
    },
    ...overrides,
  });
}

export const aStoredCvv = (): StoredCvv => ({ sealed: { keyId: 'k1', iv: 'aXY=', ciphertext: 'Y3Z2', tag: 'dGFn' } });

/** A format-4 CVV record: nonce and deadline (the contract only stores them; the vault checks them). */
export const aNoncedCvv = (nonce = 'bm9uY2U'): StoredCvv => ({
  ...aStoredCvv(),
  mode: 'test',
  nonce,
  expiresAt: '2030-01-01T00:00:00.000Z',
});

/** What takeCvv hands out, when anything: the record, or null (none, or refused as replayed). */
async function take(store: CardStore, t: string): Promise<StoredCvv | null> {
  const taken = await store.takeCvv(t, (record) => ({ id: record.nonce ?? record.sealed.iv, rememberMs: 60_000 }));
  return taken?.outcome === 'taken' ? taken.record : null;
}

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

    it('hands the CVV out once: takeCvv reads and deletes it, the card stays', async () => {
      const t = token();
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } });
      expect(await take(store, t)).toEqual(aStoredCvv());
      expect(await take(store, t)).toBeNull();
      expect(await store.hasCvv(t)).toBe(false);
      expect(await store.getCard(t)).toEqual(aStoredCard());
    });

    it('scans every card token in steps and replaces a record only while it is unchanged', async () => {
      const tokens = Array.from({ length: 7 }, () => token());
      for (const t of tokens)
        await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } });
      const seen = new Set<string>();
      let cursor = '0';
      do {
        const step = await store.scanTokens(cursor, 2);
        step.tokens.forEach((t) => seen.add(t));
        cursor = step.cursor;
      } while (cursor !== '0');
      for (const t of tokens) expect(seen.has(t)).toBe(true);

      const [first] = tokens as [string];
      const raw = (await store.readRaw('card', first)) as Buffer;
      const changed = raw.toString('utf8').replace('"last4":"4242"', '"last4":"0000"');
      expect(await store.replaceRaw('card', first, 'not what is stored', changed)).toBe(false);
      expect(await store.replaceRaw('card', first, raw, changed)).toBe(true);
      expect((await store.getCard(first))?.last4).toBe('0000');
      await take(store, first);
      expect(await store.replaceRaw('cvv', first, 'anything', 'x')).toBe(false);
      expect(await store.readRaw('cvv', first)).toBeNull();
    });

    it('refuses a CVV whose replay id was used before, even when the record is written back, and deletes it', async () => {
      const t = token();
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aNoncedCvv(), ttlMs: 60_000 } });
      const copy = (await store.readRaw('cvv', t)) as Buffer;
      expect(await take(store, t)).toEqual(aNoncedCvv());
      // Written back as it was (a restore from a copy): it is not handed out again.
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aNoncedCvv(), ttlMs: 60_000 } });
      expect(await store.readRaw('cvv', t)).toEqual(copy);
      expect(await store.takeCvv(t, () => ({ id: 'bm9uY2U', rememberMs: 60_000 }))).toEqual({ outcome: 'replayed' });
      expect(await store.hasCvv(t)).toBe(false);
      // Another CVV of the same token (a new nonce) is not affected.
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aNoncedCvv('b3RoZXI'), ttlMs: 60_000 } });
      expect(await take(store, t)).toEqual(aNoncedCvv('b3RoZXI'));
    });

    it('keeps a named checkpoint until it is cleared', async () => {
      await store.setCheckpoint('contract', '{"cursor":"42"}');
      expect(await store.getCheckpoint('contract')).toBe('{"cursor":"42"}');
      await store.setCheckpoint('contract', null);
      expect(await store.getCheckpoint('contract')).toBeNull();
    });

    it('saves a card without a CVV', async () => {
      const t = token();
      await store.save({ token: t, card: aStoredCard(), cardTtlMs: 60_000 });
      expect(await store.getCard(t)).toEqual(aStoredCard());
      expect(await store.getCvv(t)).toBeNull();
      expect(await store.hasCvv(t)).toBe(false);
    });

    it('saves a batch of entries, each with or without its CVV', async () => {
      const [a, b, c] = [token(), token(), token()];
      const other = { ...aStoredCard(), last4: '0005' };
      const outcomes = await store.saveMany([
        { token: a, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } },
        { token: b, card: other, cardTtlMs: 60_000 },
        { token: c, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } },
      ]);
      // One outcome per entry, in order: only a saved entry's token may be handed out.
      expect(outcomes).toEqual([{ saved: true }, { saved: true }, { saved: true }]);
      expect(await store.getCard(a)).toEqual(aStoredCard());
      expect(await store.getCard(b)).toEqual(other);
      expect(await store.hasCvv(a)).toBe(true);
      expect(await store.hasCvv(b)).toBe(false);
      expect(await take(store, c)).toEqual(aStoredCvv());
      expect(await store.saveMany([])).toEqual([]);
    });

    it('looks up and claims fingerprint index entries a batch at a time, each claim on its own', async () => {
      const [held, free, stale, mine, gone, other] = [token(), token(), token(), token(), token(), token()];
      const fp = (name: string): string => `contract-fp-${name}-${held}`;
      expect(await store.claimFingerprint(fp('held'), held, null, 60_000)).toBe(held);
      expect(await store.claimFingerprint(fp('stale'), gone, null, 60_000)).toBe(gone);
      expect(await store.findByFingerprints([fp('held'), fp('free'), fp('stale')])).toEqual([held, null, gone]);
      const holders = await store.claimFingerprints([
        { fingerprint: fp('held'), token: other, replacing: null, ttlMs: 60_000 },
        { fingerprint: fp('free'), token: free, replacing: null, ttlMs: 60_000 },
        { fingerprint: fp('stale'), token: stale, replacing: gone, ttlMs: 60_000 },
        { fingerprint: fp('held'), token: mine, replacing: null, ttlMs: 60_000 },
      ]);
      // A held entry answers its holder (twice in a batch too); an empty one, or one naming the token found gone, is taken.
      expect(holders).toEqual([held, free, stale, held]);
      expect(await store.findByFingerprints([fp('held'), fp('free'), fp('stale')])).toEqual([held, free, stale]);
      expect(await store.findByFingerprints([])).toEqual([]);
      expect(await store.claimFingerprints([])).toEqual([]);
    });

    it('keeps the mode of a card and its CVV, and reads records written before tokens had one without a mode', async () => {
      const [moded, legacy] = [token(), token()];
      const liveCard = aStoredCard({ mode: 'live' });
      const liveCvv: StoredCvv = { ...aStoredCvv(), mode: 'live' };
      await store.save({ token: moded, card: liveCard, cardTtlMs: 60_000, cvv: { record: liveCvv, ttlMs: 60_000 } });
      await store.save({ token: legacy, card: aStoredCard(), cardTtlMs: 60_000, cvv: { record: aStoredCvv(), ttlMs: 60_000 } });
      expect(await store.getCard(moded)).toEqual(liveCard);
      expect(await store.getCvv(moded)).toEqual(liveCvv);
      expect((await store.getCard(legacy))?.mode).toBeUndefined();
      expect((await take(store, legacy))?.mode).toBeUndefined();
      // The stored form says which: a version-3 record names its mode, an older one has none.
      expect(JSON.parse(String(await store.readRaw('card', moded)))).toMatchObject({ v: 3, mode: 'live' });
      const bound = token();
      const boundCard = aStoredCard({ mode: 'live', metadataBound: true });
      await store.save({ token: bound, card: boundCard, cardTtlMs: 60_000, cvv: { record: aNoncedCvv(), ttlMs: 60_000 } });
      // Version 4: every clear field is bound into the envelope; the CVV carries its nonce and deadline.
      expect(JSON.parse(String(await store.readRaw('card', bound)))).toMatchObject({ v: 4, mode: 'live' });
      expect(JSON.parse(String(await store.readRaw('cvv', bound)))).toMatchObject({ v: 4, nonce: 'bm9uY2U' });
      expect(await store.getCard(bound)).toEqual(boundCard);
      expect(await store.getCvv(bound)).toEqual(aNoncedCvv());
      expect(JSON.parse(String(await store.readRaw('card', legacy)))).toMatchObject({ v: 2 });
    });

    it('stores a format-6 card as bytes and reads it back as it was saved', async () => {
      const t = token();
      const compact = aCompactStoredCard();
      await store.save({ token: t, card: compact, cardTtlMs: 60_000 });
      expect(await store.getCard(t)).toEqual(compact);
      const raw = (await store.readRaw('card', t)) as Buffer;
      expect(raw[0]).toBe(6);
      // Compare-and-set works on the exact bytes.
      const retained = { ...compact, expiryYear: 2031 };
      expect(await store.retainCard(t, Buffer.from(raw.toString('utf8'), 'utf8'), retained, { cardTtlMs: 60_000, cvvTtlMs: 0 })).toBe(
        false,
      );
      expect(await store.retainCard(t, raw, retained, { cardTtlMs: 60_000, cvvTtlMs: 0 })).toBe(true);
      expect(await store.getCard(t)).toEqual(retained);
    });

    it('retains a card only while it is unchanged: the card and its CVV get their new TTLs in the same step', async () => {
      const [withCvv, cvvLeftAlone, withoutCvv] = [token(), token(), token()];
      const provisional = aStoredCard({ mode: 'test', provisional: true, expiresAt: '2025-01-01T00:00:01.000Z' });
      const retained = aStoredCard({ mode: 'test' });
      for (const t of [withCvv, cvvLeftAlone]) {
        await store.save({ token: t, card: provisional, cardTtlMs: 400, cvv: { record: aStoredCvv(), ttlMs: 400 } });
      }
      await store.save({ token: withoutCvv, card: provisional, cardTtlMs: 400 });
      expect(await store.getCard(withCvv)).toEqual(provisional);
      const raws = await Promise.all([withCvv, cvvLeftAlone, withoutCvv].map(async (t) => (await store.readRaw('card', t)) as Buffer));
      const [rawWithCvv, rawCvvLeftAlone, rawWithoutCvv] = raws as [Buffer, Buffer, Buffer];
      const ttl = { cardTtlMs: 60_000, cvvTtlMs: 60_000 };

      expect(await store.retainCard(withCvv, Buffer.from('not what is stored'), retained, ttl)).toBe(false);
      expect(await store.getCard(withCvv)).toEqual(provisional);
      expect(await store.retainCard(withCvv, rawWithCvv, retained, ttl)).toBe(true);
      expect(await store.retainCard(withCvv, rawWithCvv, retained, ttl)).toBe(false);
      expect(await store.retainCard(cvvLeftAlone, rawCvvLeftAlone, retained, { cardTtlMs: 60_000, cvvTtlMs: 0 })).toBe(true);
      expect(await store.retainCard(withoutCvv, rawWithoutCvv, retained, ttl)).toBe(true);
      expect(await store.retainCard(token(), rawWithCvv, retained, ttl)).toBe(false);

      // Past the provisional TTLs: the retained cards stay, and only the CVV given a new TTL with them.
      await new Promise((resolve) => setTimeout(resolve, 700));
      for (const t of [withCvv, cvvLeftAlone, withoutCvv]) expect(await store.getCard(t)).toEqual(retained);
      expect(await store.hasCvv(withCvv)).toBe(true);
      expect(await store.hasCvv(cvvLeftAlone)).toBe(false);
      expect(await store.hasCvv(withoutCvv)).toBe(false);
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
