import { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { useRedisServer } from '@tessera/test-support';
import type { TokenRecordView } from '../domain/card';
import { aCard, anEmptyRedisCardStore, aVault, cardAndCvvKeyCount, keyRingEntry, keyRingOf } from '../test/builders';

jest.setTimeout(20_000);

/** This file's private redis-server; each test's store starts on an empty database. */
const db = useRedisServer((url) => new Redis(url));

const A = { merchantId: 'merchant_a', mode: 'test' };
/** The published test cards test mode takes (an import's cards come without a CVV). */
const VISA = aCard({ number: '4242424242424242', cvv: '', dedupe: true });
const MASTERCARD = aCard({ number: '5555555555554444', cvv: '', dedupe: true });
const AMEX = aCard({ number: '378282246310005', cvv: '', dedupe: true });

async function setup() {
  const store = await anEmptyRedisCardStore(db);
  const ring = keyRingOf(keyRingEntry('k1'));
  return { store, vault: aVault({ store, keyRing: ring }), ring };
}

function viewOf(outcome: TokenRecordView | TesseraError | undefined): TokenRecordView {
  if (outcome === undefined || outcome instanceof TesseraError) throw new Error(`expected a token, got ${outcome?.code ?? 'nothing'}`);
  return outcome;
}

describe('Vault.tokenizeDeduplicatedMany (the import batch path)', () => {
  it('makes one token per card, readable by every other path exactly as tokenize made it', async () => {
    const { vault, store } = await setup();
    const [visa, mastercard] = (await vault.tokenizeDeduplicatedMany([VISA, MASTERCARD])).map(viewOf) as [TokenRecordView, TokenRecordView];
    expect(visa).toMatchObject({ last4: '4242', brand: 'visa', deduplicated: false, cvvAvailable: false });
    expect(mastercard).toMatchObject({ last4: '4444', brand: 'mastercard', deduplicated: false });
    expect(visa.token).not.toBe(mastercard.token);
    const { deduplicated: _, ...visaRead } = visa;
    expect(await vault.getToken(A, visa.token)).toMatchObject(visaRead);
    // A later POST /v1/token with dedupe finds it through the fingerprint index.
    expect(await vault.tokenize(VISA)).toMatchObject({ token: visa.token, deduplicated: true });
    expect(await cardAndCvvKeyCount(db.client)).toBe(2);
    await store.close();
  });

  it('gives the same card twice in one batch one token, the second answered as a duplicate with its details', async () => {
    const { vault, store } = await setup();
    const renewed = { ...VISA, expiryMonth: 9, holderName: 'Ada King' };
    const [first, other, second] = (await vault.tokenizeDeduplicatedMany([VISA, MASTERCARD, renewed])).map(viewOf);
    expect(first?.deduplicated).toBe(false);
    expect(second).toMatchObject({ token: first?.token, deduplicated: true, expiryMonth: 9 });
    expect(other?.token).not.toBe(first?.token);
    expect(await vault.getToken(A, first?.token ?? '')).toMatchObject({ expiryMonth: 9 });
    expect(await cardAndCvvKeyCount(db.client)).toBe(2);
    await store.close();
  });

  it('answers the token a card already has, refreshed with the batch card’s expiry', async () => {
    const { vault, store } = await setup();
    const stored = await vault.tokenize(VISA);
    const [again, fresh] = (await vault.tokenizeDeduplicatedMany([{ ...VISA, expiryMonth: 11 }, AMEX])).map(viewOf);
    expect(again).toMatchObject({ token: stored.token, deduplicated: true, expiryMonth: 11 });
    expect(fresh).toMatchObject({ last4: '0005', deduplicated: false });
    expect(await cardAndCvvKeyCount(db.client)).toBe(2);
    await store.close();
  });

  it('replaces a token the index names but that is gone, as tokenize does', async () => {
    const { vault, store } = await setup();
    const stored = await vault.tokenize(VISA);
    await store.delete(stored.token);
    const [made] = (await vault.tokenizeDeduplicatedMany([VISA])).map(viewOf);
    expect(made).toMatchObject({ deduplicated: false });
    expect(made?.token).not.toBe(stored.token);
    expect(await vault.tokenize(VISA)).toMatchObject({ token: made?.token, deduplicated: true });
    await store.close();
  });

  it('ends with one token when a concurrent single tokenize of the same card claims the index between the batch’s lookup and claim', async () => {
    const { vault, store, ring } = await setup();
    // Another vault replica on the same Redis, serving POST /v1/token with dedupe.
    const replica = aVault({ store, keyRing: ring });
    let single: TokenRecordView | undefined;
    const lookup = store.findByFingerprints.bind(store);
    jest.spyOn(store, 'findByFingerprints').mockImplementationOnce(async (fingerprints) => {
      const found = await lookup(fingerprints);
      single = await replica.tokenize(VISA);
      return found;
    });
    const [batched, other] = (await vault.tokenizeDeduplicatedMany([VISA, MASTERCARD])).map(viewOf);
    expect(found(single).deduplicated).toBe(false);
    expect(batched).toMatchObject({ token: found(single).token, deduplicated: true });
    expect(other).toMatchObject({ deduplicated: false });
    // The batch's own token for the card lost the claim and was deleted: two cards, not three.
    expect(await cardAndCvvKeyCount(db.client)).toBe(2);
    expect(await vault.tokenize(VISA)).toMatchObject({ token: found(single).token, deduplicated: true });
    await store.close();
  });

  it('refuses a card on its own and tokenizes the others', async () => {
    const { vault, store } = await setup();
    const live = aCard({ number: '4111111111111111', cvv: '', dedupe: true, mode: 'test' });
    const outcomes = await vault.tokenizeDeduplicatedMany([VISA, live, AMEX]);
    expect(outcomes[1]).toBeInstanceOf(TesseraError);
    expect((outcomes[1] as TesseraError).code).toBe('live_card_in_test_mode');
    expect(viewOf(outcomes[0]).last4).toBe('4242');
    expect(viewOf(outcomes[2]).last4).toBe('0005');
    await store.close();
  });

  it('fails every new card of the batch, handing out none of their tokens, when the claims are not acknowledged', async () => {
    const { vault, store } = await setup();
    jest.spyOn(store, 'claimFingerprints').mockRejectedValueOnce(new TesseraError('service_unavailable'));
    const outcomes = await vault.tokenizeDeduplicatedMany([VISA, MASTERCARD]);
    expect(outcomes.map((o) => (o instanceof TesseraError ? o.code : 'token'))).toEqual(['service_unavailable', 'service_unavailable']);
    expect(await cardAndCvvKeyCount(db.client)).toBe(0);
    // Nothing left in the index either: the next attempt makes the card's token.
    expect(viewOf((await vault.tokenizeDeduplicatedMany([VISA]))[0]).deduplicated).toBe(false);
    await store.close();
  });
});

function found(view: TokenRecordView | undefined): TokenRecordView {
  if (view === undefined) throw new Error('the concurrent tokenize did not run');
  return view;
}
