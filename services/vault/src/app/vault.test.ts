import { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { useRedisServer } from '@tessera/test-support';
import type { CardEntryToSave, CardStore } from '../store/cardStore';
import type { RedisCardStore } from '../store/redisCardStore';
import {
  aCard,
  aJumpingClock,
  anEmptyRedisCardStore,
  aVault,
  cardAndCvvKeyCount,
  codeOf,
  keyRingEntry,
  keyRingOf,
  type JumpingClock,
} from '../test/builders';

const JSON_TYPE = 'application/json';
/** The merchants' test keys (aCard's default number is a published test card). */
const A = { merchantId: 'merchant_a', mode: 'test' };
const B = { merchantId: 'merchant_b', mode: 'test' };

jest.setTimeout(20_000);

/** This file's private redis-server; each test's store starts on an empty database. */
const db = useRedisServer((url) => new Redis(url));

/** A vault on `store`, or on a fresh store over the emptied database. */
async function setup(opts: { clock?: JumpingClock; ring?: ReturnType<typeof keyRingOf>; store?: RedisCardStore } = {}) {
  const store = opts.store ?? (await anEmptyRedisCardStore(db));
  const vault = aVault({
    store,
    ...(opts.ring ? { keyRing: opts.ring } : {}),
    ...(opts.clock ? { now: opts.clock.now } : {}),
  });
  return { store, vault };
}

const MARCH_1_2025 = Date.parse('2025-03-01T00:00:00Z');

describe('Vault', () => {
  it('tokenizes a card and returns only non-sensitive details', async () => {
    const { vault, store } = await setup();
    const record = await vault.tokenize(aCard({ number: '378282246310005', cvv: '1234', expiryMonth: 7, expiryYear: 2031 }));
    expect(record).toMatchObject({
      last4: '0005',
      brand: 'amex',
      expiryMonth: 7,
      expiryYear: 2031,
      cvvAvailable: true,
      holderNameAvailable: true,
    });
    expect(record.token).toMatch(/^tok\.[A-Za-z0-9_-]{32}$/);
    expect(new Date(record.createdAt).toISOString()).toBe(record.createdAt);
    expect(record.expiresAt).toBe('2031-08-31T12:00:00.000Z');
    expect(JSON.stringify(await store.getCard(record.token))).not.toContain('37828224631');
    await store.close();
  });

  it('gives the same card a different token every time, none containing a run of the card number', async () => {
    const { vault, store } = await setup();
    const number = '4242424242424242';
    const windows = Array.from({ length: number.length - 3 }, (_, i) => number.slice(i, i + 4));
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { token } = await vault.tokenize(aCard({ number }));
      tokens.add(token);
      for (const w of windows) expect(token).not.toContain(w);
    }
    expect(tokens.size).toBe(20);
    await store.close();
  });

  it('reads a token back with the same details', async () => {
    const { vault, store } = await setup();
    const created = await vault.tokenize(aCard());
    expect(await vault.getToken(A, created.token)).toEqual(created);
    await store.close();
  });

  it('renders the card into a PSP body for its merchant', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard({ holderName: 'Zoë "Z" O\'Neil', expiryMonth: 4, expiryYear: 2031 }));
    const body = await vault.render(
      A,
      token,
      '{"n":"[CARD_NUMBER]","m":"[CARD_EXPIRY_MONTH]","y":"[CARD_EXPIRY_YEAR]","c":"[CARD_CVV]","h":"[CARD_HOLDER]"}',
      JSON_TYPE,
    );
    expect(JSON.parse(body.toString('utf8'))).toEqual({ n: '4242424242424242', m: '04', y: '2031', c: '123', h: 'Zoë "Z" O\'Neil' });
    await store.close();
  });

  it('answers token_not_found to another merchant for read, render and delete, and keeps the token', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard());
    expect(await codeOf(vault.getToken(B, token))).toBe('token_not_found');
    expect(await codeOf(vault.render(B, token, '[CARD_NUMBER]', JSON_TYPE))).toBe('token_not_found');
    expect(await codeOf(vault.deleteToken(B, token))).toBe('token_not_found');
    expect((await vault.getToken(A, token)).token).toBe(token);
    await store.close();
  });

  it('answers token_not_found to the other mode of the same merchant on every use case, and keeps the token', async () => {
    const { vault, store } = await setup();
    const live = { merchantId: 'merchant_a', mode: 'live' };
    const { token: liveToken } = await vault.tokenize(aCard({ number: '4111111111111111', mode: 'live' }));
    const { token: testToken } = await vault.tokenize(aCard({ number: '4242424242424242', mode: 'test' }));
    for (const [owner, token] of [
      [A, liveToken],
      [live, testToken],
    ] as const) {
      expect(await codeOf(vault.getToken(owner, token))).toBe('token_not_found');
      expect(await codeOf(vault.render(owner, token, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain'))).toBe('token_not_found');
      expect(await codeOf(vault.preview(owner, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
      expect(await codeOf(vault.deleteToken(owner, token))).toBe('token_not_found');
    }
    expect((await vault.getToken(live, liveToken)).cvvAvailable).toBe(true);
    expect((await vault.render(live, liveToken, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toBe('4111111111111111/123');
    expect((await vault.getToken(A, testToken)).cvvAvailable).toBe(true);
    await store.close();
  });

  it.each(['', 'Test', 'sandbox'])(
    'matches no token for the mode %p (an older caller sends "") and tokenizes nothing for it',
    async (mode) => {
      const { vault, store } = await setup();
      const { token: testToken } = await vault.tokenize(aCard());
      const { token: liveToken } = await vault.tokenize(aCard({ number: '4111111111111111' }));
      for (const token of [testToken, liveToken]) {
        expect(await codeOf(vault.getToken({ merchantId: 'merchant_a', mode }, token))).toBe('token_not_found');
        expect(await codeOf(vault.render({ merchantId: 'merchant_a', mode }, token, '[CARD_NUMBER]', 'text/plain'))).toBe(
          'token_not_found',
        );
      }
      expect(await codeOf(vault.tokenize(aCard({ mode })))).toBe('parameter_invalid');
      await store.close();
    },
  );

  it.each(['', 'tok.', 'tok.short', 'not-a-token-at-all-but-long-enough', `tok.${'A'.repeat(200)}`, 'tok.AAAAAAAAAAAAAAAAAAAA}'])(
    'answers token_not_found for the malformed token %p',
    async (token) => {
      const { vault, store } = await setup();
      expect(await codeOf(vault.getToken(A, token))).toBe('token_not_found');
      await store.close();
    },
  );

  it('deletes the card and CVV; the token is then unknown', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard());
    await vault.deleteToken(A, token);
    expect(await codeOf(vault.getToken(A, token))).toBe('token_not_found');
    expect(await codeOf(vault.deleteToken(A, token))).toBe('token_not_found');
    expect(await cardAndCvvKeyCount(db.client)).toBe(0);
    await store.close();
  });

  it('answers cvv_unavailable once the CVV has expired, while the rest still renders', async () => {
    const clock = aJumpingClock(db.client, MARCH_1_2025);
    const { vault, store } = await setup({ clock });
    const { token } = await vault.tokenize(aCard());
    await clock.advance(3600 * 1000);
    expect((await vault.getToken(A, token)).cvvAvailable).toBe(false);
    expect(await codeOf(vault.render(A, token, '[CARD_CVV]', JSON_TYPE))).toBe('cvv_unavailable');
    expect((await vault.render(A, token, '[CARD_NUMBER]', JSON_TYPE)).toString()).toBe('4242424242424242');
    await store.close();
  });

  it('previews a body with masked card values, and lists the CVV as unfillable once it has expired', async () => {
    const clock = aJumpingClock(db.client, MARCH_1_2025);
    const { vault, store } = await setup({ clock });
    const { token } = await vault.tokenize(aCard());
    const template = '{"n":"[CARD_NUMBER]","c":"[CARD_CVV]","h":"[CARD_HOLDER]","x":"[CARD_NUMBR]"}';
    const before = await vault.preview(A, token, template, JSON_TYPE);
    expect(JSON.parse(before.body)).toEqual({ n: '424242******4242', c: '***', h: 'A*** L***', x: '[CARD_NUMBR]' });
    expect(before.unknown).toEqual(['[CARD_NUMBR]']);
    await clock.advance(3600 * 1000);
    const after = await vault.preview(A, token, template, JSON_TYPE);
    expect(after.unfillable).toEqual([{ placeholder: '[CARD_CVV]', code: 'cvv_unavailable' }]);
    expect(await codeOf(vault.preview(B, token, template, JSON_TYPE))).toBe('token_not_found');
    await store.close();
  });

  it('keeps the card until the end of its expiry month plus the grace period', async () => {
    const clock = aJumpingClock(db.client, MARCH_1_2025);
    const { vault, store } = await setup({ clock });
    const { token, expiresAt } = await vault.tokenize(aCard({ expiryMonth: 3, expiryYear: 2025 }));
    // April 1st 00:00 in UTC-12 is 12:00 UTC; plus 30 days.
    expect(expiresAt).toBe('2025-05-01T12:00:00.000Z');
    // A second either side: Redis counts the TTL from when it took the write, a few real
    // milliseconds after the vault read its clock, and keeps counting during the calls (see aJumpingClock).
    await clock.advanceTo(Date.parse(expiresAt) - 1000);
    expect((await vault.getToken(A, token)).token).toBe(token);
    await clock.advanceTo(Date.parse(expiresAt) + 1000);
    expect(await codeOf(vault.getToken(A, token))).toBe('token_not_found');
    await store.close();
  });

  it('answers cvv_unavailable and holder_name_unavailable for a card stored without them', async () => {
    const { vault, store } = await setup();
    const created = await vault.tokenize(aCard({ cvv: '', holderName: '' }));
    expect(created).toMatchObject({ cvvAvailable: false, holderNameAvailable: false });
    expect(await codeOf(vault.render(A, created.token, '[CARD_CVV]', JSON_TYPE))).toBe('cvv_unavailable');
    expect(await codeOf(vault.render(A, created.token, '[CARD_HOLDER]', JSON_TYPE))).toBe('holder_name_unavailable');
    await store.close();
  });

  it('does not read the CVV record when the body does not ask for it', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard());
    const takeCvv = jest.spyOn(store, 'takeCvv');
    await vault.render(A, token, '{"n":"[CARD_NUMBER]"}', JSON_TYPE);
    expect(takeCvv).not.toHaveBeenCalled();
    expect((await vault.getToken(A, token)).cvvAvailable).toBe(true);
    await vault.render(A, token, '{"c":"[CARD_CVV]"}', JSON_TYPE);
    expect(takeCvv).toHaveBeenCalledTimes(1);
    await store.close();
  });

  it('deletes the CVV on its first use: a second render that needs it answers cvv_unavailable', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard());
    expect((await vault.render(A, token, '[CARD_CVV]', 'text/plain')).toString()).toBe('123');
    expect((await vault.getToken(A, token)).cvvAvailable).toBe(false);
    expect(await codeOf(vault.render(A, token, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
    expect((await vault.render(A, token, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
    // The card, and the mark that this CVV was used (not the CVV).
    expect(await cardAndCvvKeyCount(db.client)).toBe(2);
    expect(await store.hasCvv(token)).toBe(false);
    await store.close();
  });

  it('gives the CVV to exactly one of two concurrent renders', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard());
    const results = await Promise.allSettled([1, 2].map(() => vault.render(A, token, '[CARD_CVV]', 'text/plain')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    await store.close();
  });

  it('does not burn the CVV on a render that fails for want of a holder name', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard({ holderName: '' }));
    expect(await codeOf(vault.render(A, token, '[CARD_CVV]/[CARD_HOLDER]', JSON_TYPE))).toBe('holder_name_unavailable');
    expect((await vault.getToken(A, token)).cvvAvailable).toBe(true);
    await store.close();
  });

  it('refuses a body that would render past RENDER_MAX_BYTES with rendered_body_too_large before taking the CVV', async () => {
    const { store } = await setup();
    const vault = aVault({ store, renderMaxBytes: 1000 });
    const { token } = await vault.tokenize(aCard({ holderName: '\uffff'.repeat(200) }));
    const takeCvv = jest.spyOn(store, 'takeCvv');
    // 1800 bytes once form-encoded: over the cap only because of the holder name.
    expect(await codeOf(vault.render(A, token, 'cvc=[CARD_CVV]&name=[CARD_HOLDER]', 'application/x-www-form-urlencoded'))).toBe(
      'rendered_body_too_large',
    );
    expect(takeCvv).not.toHaveBeenCalled();
    expect((await vault.getToken(A, token)).cvvAvailable).toBe(true);
    expect((await vault.render(A, token, 'cvc=[CARD_CVV]', 'application/x-www-form-urlencoded')).toString()).toBe('cvc=123');
    await store.close();
  });

  it('refuses the red team body (975 KB of [CARD_HOLDER]) under the default cap, CVV kept', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard({ holderName: '\uffff'.repeat(200) }));
    const attack = `cvc=[CARD_CVV]&name=${'[CARD_HOLDER]'.repeat(75_000)}`;
    expect(await codeOf(vault.render(A, token, attack, 'application/x-www-form-urlencoded'))).toBe('rendered_body_too_large');
    expect((await vault.getToken(A, token)).cvvAvailable).toBe(true);
    await store.close();
  });

  it('a body whose 4-digit CVV fits the cap exactly renders: the pre-check bounds the CVV by its longest length', async () => {
    const { store } = await setup();
    const vault = aVault({ store, renderMaxBytes: 8 });
    const { token } = await vault.tokenize(aCard({ number: '378282246310005', cvv: '1234' }));
    expect((await vault.render(A, token, 'cvc=[CARD_CVV]', 'text/plain')).toString()).toBe('cvc=1234');
    await store.close();
  });

  it('refuses [CARD_HOLDER] in a multipart body with placeholder_not_encodable before taking the CVV', async () => {
    const { vault, store } = await setup();
    const { token } = await vault.tokenize(aCard());
    expect(await codeOf(vault.render(A, token, '[CARD_CVV] [CARD_HOLDER]', 'multipart/form-data; boundary=x'))).toBe(
      'placeholder_not_encodable',
    );
    expect((await vault.getToken(A, token)).cvvAvailable).toBe(true);
    await store.close();
  });

  it('tokenizes a batch card by card: a bad card is refused, the others get tokens that read back', async () => {
    const { vault, store } = await setup();
    const outcomes = await vault.tokenizeBatch([
      aCard({ number: '378282246310005', cvv: '1234' }),
      aCard({ number: '4242424242424241' }),
      aCard({ cvv: '' }),
    ]);
    expect(outcomes).toHaveLength(3);
    const [first, bad, third] = outcomes;
    expect(bad).toBeInstanceOf(TesseraError);
    expect((bad as TesseraError).code).toBe('card_number_invalid');
    for (const [outcome, last4, cvvAvailable] of [
      [first, '0005', true],
      [third, '4242', false],
    ] as const) {
      if (outcome instanceof TesseraError || outcome === undefined) throw new Error('expected a token');
      expect(await vault.getToken(A, outcome.token)).toMatchObject({ last4, cvvAvailable });
    }
    await store.close();
  });

  it('rejects bad cards before storing anything', async () => {
    const { vault, store } = await setup();
    expect(await codeOf(vault.tokenize(aCard({ number: '4242424242424241' })))).toBe('card_number_invalid');
    expect(await codeOf(vault.tokenize(aCard({ expiryMonth: 13 })))).toBe('parameter_invalid');
    expect(await cardAndCvvKeyCount(db.client)).toBe(0);
    await store.close();
  });

  it('still opens cards sealed under an older key after a new key is added', async () => {
    const store = await anEmptyRedisCardStore(db);
    const oldEntry = keyRingEntry('2024');
    const before = (await setup({ store, ring: keyRingOf(oldEntry) })).vault;
    const { token } = await before.tokenize(aCard());
    const after = (await setup({ store, ring: keyRingOf(oldEntry, keyRingEntry('2025')) })).vault;
    expect((await after.render(A, token, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toBe('4242424242424242/123');
    const { token: newer } = await after.tokenize(aCard());
    expect((await store.getCard(newer))?.sealed.keyId).toBe('2025');
    await store.close();
  });

  it('answers internal_error, not a crash or card data, when a record is under a key the ring does not have', async () => {
    const store = await anEmptyRedisCardStore(db);
    const { token } = await (await setup({ store })).vault.tokenize(aCard());
    const otherKeys = (await setup({ store, ring: keyRingOf(keyRingEntry('k2')) })).vault;
    const err = await otherKeys.render(A, token, '[CARD_NUMBER]', 'text/plain').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraError);
    expect((err as TesseraError).code).toBe('internal_error');
    expect(JSON.stringify((err as TesseraError).toJSON())).not.toContain('4242');
    await store.close();
  });

  it('answers a record that does not open under the same key id (another key, or an edited ciphertext) as missing', async () => {
    const store = await anEmptyRedisCardStore(db);
    const { token } = await (await setup({ store })).vault.tokenize(aCard());
    const sameIdOtherKey = (await setup({ store, ring: keyRingOf(keyRingEntry('k1')) })).vault;
    const err = await sameIdOtherKey.render(A, token, '[CARD_NUMBER]', 'text/plain').catch((e: unknown) => e);
    expect((err as TesseraError).code).toBe('token_not_found');
    expect(JSON.stringify((err as TesseraError).toJSON())).not.toContain('4242');
    await store.close();
  });

  it('answers token_not_found when the clear merchant id of a record was tampered with', async () => {
    const store = await anEmptyRedisCardStore(db);
    const { vault } = await setup({ store });
    const { token } = await vault.tokenize(aCard());
    const card = await store.getCard(token);
    await store.save({ token, card: { ...card!, merchantId: 'merchant_evil' }, cardTtlMs: 60_000 });
    expect(await codeOf(vault.render({ ...A, merchantId: 'merchant_evil' }, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    await store.close();
  });

  it("keeps a batch item's failed write to that item: the others get their tokens, it gets none", async () => {
    const store = await anEmptyRedisCardStore(db);
    const failing: CardStore = Object.assign(Object.create(store) as CardStore, {
      // The store's own per-entry outcomes: the second card's write was not acknowledged.
      saveMany: async (entries: readonly CardEntryToSave[]) => {
        await store.saveMany(entries.filter((_, i) => i !== 1));
        return entries.map((_, i) =>
          i === 1 ? { saved: false as const, error: new TesseraError('service_unavailable') } : { saved: true as const },
        );
      },
    });
    const vault = aVault({ store: failing });
    const outcomes = await vault.tokenizeBatch([aCard(), aCard({ number: '5555555555554444' }), aCard({ number: '1234' }), aCard()]);
    expect(outcomes.map((item) => (item instanceof TesseraError ? item.code : 'token'))).toEqual([
      'token',
      'service_unavailable',
      'card_number_invalid',
      'token',
    ]);
    for (const item of [outcomes[0], outcomes[3]]) {
      expect(await vault.getToken(A, (item as { token: string }).token)).toMatchObject({ last4: '4242' });
    }
    await store.close();
  });

  it('passes store outages through as service_unavailable', async () => {
    const down: CardStore = {
      save: () => Promise.reject(new TesseraError('service_unavailable')),
      saveMany: () => Promise.reject(new TesseraError('service_unavailable')),
      getCard: () => Promise.reject(new TesseraError('service_unavailable')),
      getCvv: () => Promise.reject(new TesseraError('service_unavailable')),
      takeCvv: () => Promise.reject(new TesseraError('service_unavailable')),
      scanTokens: () => Promise.reject(new TesseraError('service_unavailable')),
      readRaw: () => Promise.reject(new TesseraError('service_unavailable')),
      replaceRaw: () => Promise.reject(new TesseraError('service_unavailable')),
      retainCard: () => Promise.reject(new TesseraError('service_unavailable')),
      getCheckpoint: () => Promise.reject(new TesseraError('service_unavailable')),
      setCheckpoint: () => Promise.reject(new TesseraError('service_unavailable')),
      hasCvv: () => Promise.reject(new TesseraError('service_unavailable')),
      delete: () => Promise.reject(new TesseraError('service_unavailable')),
      putCvv: () => Promise.reject(new TesseraError('service_unavailable')),
      getFingerprintKey: () => Promise.reject(new TesseraError('service_unavailable')),
      createFingerprintKey: () => Promise.reject(new TesseraError('service_unavailable')),
      replaceFingerprintKey: () => Promise.reject(new TesseraError('service_unavailable')),
      findByFingerprint: () => Promise.reject(new TesseraError('service_unavailable')),
      findByFingerprints: () => Promise.reject(new TesseraError('service_unavailable')),
      claimFingerprint: () => Promise.reject(new TesseraError('service_unavailable')),
      claimFingerprints: () => Promise.reject(new TesseraError('service_unavailable')),
      releaseFingerprint: () => Promise.reject(new TesseraError('service_unavailable')),
      findAlias: () => Promise.reject(new TesseraError('service_unavailable')),
      claimAlias: () => Promise.reject(new TesseraError('service_unavailable')),
      releaseAliases: () => Promise.reject(new TesseraError('service_unavailable')),
      aliasesOf: () => Promise.reject(new TesseraError('service_unavailable')),
      addTokenAlias: () => Promise.reject(new TesseraError('service_unavailable')),
      extendAliases: () => Promise.reject(new TesseraError('service_unavailable')),
      ping: () => Promise.resolve({ ok: false, detail: 'down' }),
      close: () => Promise.resolve(),
    };
    const vault = aVault({ store: down });
    expect(await codeOf(vault.tokenize(aCard()))).toBe('service_unavailable');
    const batch = await vault.tokenizeBatch([aCard(), aCard()]);
    expect(batch.map((item) => (item instanceof TesseraError ? item.code : 'token'))).toEqual([
      'service_unavailable',
      'service_unavailable',
    ]);
    const imported = await vault.tokenizeDeduplicatedMany([aCard({ dedupe: true }), aCard({ dedupe: true })]);
    expect(imported.map((item) => (item instanceof TesseraError ? item.code : 'token'))).toEqual([
      'service_unavailable',
      'service_unavailable',
    ]);
    expect(await codeOf(vault.getToken(A, 'tok.AAAAAAAAAAAAAAAAAAAAAAAA'))).toBe('service_unavailable');
    expect(await codeOf(vault.retainToken(A, 'tok.AAAAAAAAAAAAAAAAAAAAAAAA'))).toBe('service_unavailable');
    expect(await vault.ready()).toEqual({ ok: false, detail: 'down' });
  });
});
