import { Redis } from 'ioredis';
import { describeCard, type TokenOwner } from '../domain/card';
import { sealRecord, type EnvelopeContext } from '../domain/envelope';
import { generateToken } from '../domain/token';
import { rewrapAll } from './keyRotation';
import { cardKey, cvvKey } from '../store/records';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aVault, anEmptyRedisCardStore, codeOf, editRecord, keyRingEntry, keyRingOf, readRecord } from '../test/builders';
import { sealFormat1 } from '../test/legacyEnvelope';
import type { Vault } from './vault';
import { useRedisServer } from '@tessera/test-support';

jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const ring = keyRingOf(keyRingEntry('k1'));
const TEST: TokenOwner = { merchantId: 'merchant_a', mode: 'test' };
const LIVE: TokenOwner = { merchantId: 'merchant_a', mode: 'live' };
const LIVE_CARD = '4111111111111111';

let store: RedisCardStore;
let vault: Vault;

beforeEach(async () => {
  store = await anEmptyRedisCardStore(db);
  vault = aVault({ store, keyRing: ring });
});

afterEach(async () => {
  await store.close();
});

/**
 * Writes a token as vaults did before tokens had a mode: format 1 (sealed directly under the KEK,
 * `v: 1`) or format 2 (envelope encryption, `v: 2`), and no mode anywhere.
 */
async function saveTokenWithoutMode(number: string, format: 1 | 2): Promise<string> {
  const card = aCard({ number, cvv: '987' });
  const token = generateToken();
  const ctx = { merchantId: card.merchantId, token, mode: null };
  const seal = (kind: EnvelopeContext['kind'], text: string) =>
    (format === 1 ? sealFormat1 : sealRecord)(ring, { ...ctx, kind }, Buffer.from(text, 'utf8'));
  const sealed = seal('card', JSON.stringify({ number, holderName: card.holderName }));
  const { mode: _mode, ...stored } = describeCard(card, 'test', sealed, new Date(Date.now() + 86_400_000), new Date());
  await store.save({ token, card: stored, cardTtlMs: 86_400_000, cvv: { record: { sealed: seal('cvv', card.cvv) }, ttlMs: 3_600_000 } });
  for (const key of [cardKey(token), cvvKey(token)]) {
    await editRecord(db.client, key, (record) => {
      expect(record).toMatchObject({ v: 2 });
      expect(record).not.toHaveProperty('mode');
      return { ...record, v: format };
    });
  }
  return token;
}

describe('test and live tokens at rest (real redis-server)', () => {
  it('stores the mode with the card and the CVV', async () => {
    const { token } = await vault.tokenize(aCard({ number: LIVE_CARD }));
    expect(await readRecord(db.client, cardKey(token))).toMatchObject({ v: 6, mode: 'live' });
    expect(await readRecord(db.client, cvvKey(token))).toMatchObject({ v: 6, mode: 'live' });
  });

  it('fails to authenticate, rather than render for the test key, a live card whose stored mode was edited to test (answered as missing)', async () => {
    const { token } = await vault.tokenize(aCard({ number: LIVE_CARD }));
    await editRecord(db.client, cardKey(token), (record) => ({ ...record, mode: 'test' }));
    await editRecord(db.client, cvvKey(token), (record) => ({ ...record, mode: 'test' }));
    expect(await codeOf(vault.render(TEST, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect(await codeOf(vault.preview(TEST, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect(await codeOf(vault.getToken(TEST, token))).toBe('token_not_found');
    // The card fails before the CVV is taken: the edit does not burn it either.
    expect(await codeOf(vault.render(TEST, token, '[CARD_CVV]', 'text/plain'))).toBe('token_not_found');
    expect(await db.client.exists(cvvKey(token))).toBe(1);
    expect(await codeOf(vault.render(LIVE, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
  });

  it('fails to decrypt a live card whose mode was removed to pass it off as a record written before modes', async () => {
    const { token } = await vault.tokenize(aCard({ number: LIVE_CARD }));
    await editRecord(db.client, cardKey(token), ({ mode: _mode, ...record }) => ({ ...record, v: 2 }));
    for (const owner of [TEST, LIVE]) {
      expect(await codeOf(vault.getToken(owner, token))).toBe('token_not_found');
      expect(await codeOf(vault.render(owner, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    }
  });

  it('opens a CVV only under its card’s mode: its own mode field is bound (format 6), and removing it fails to decrypt', async () => {
    const edited = (await vault.tokenize(aCard({ number: LIVE_CARD }))).token;
    await editRecord(db.client, cvvKey(edited), (record) => ({ ...record, mode: 'test' }));
    expect(await codeOf(vault.render(TEST, edited, '[CARD_CVV]', 'text/plain'))).toBe('token_not_found');
    // Format 4 only marked the mode; format 6 binds its header's every byte, so the edited CVV no longer opens.
    expect(await codeOf(vault.render(LIVE, edited, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
    const stripped = (await vault.tokenize(aCard({ number: LIVE_CARD }))).token;
    await editRecord(db.client, cvvKey(stripped), ({ mode: _mode, ...record }) => ({ ...record, v: 2 }));
    // A CVV that does not authenticate is never rendered; the card is intact, so: no CVV.
    expect(await codeOf(vault.render(LIVE, stripped, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
  });

  it.each([1, 2] as const)(
    'serves a format-%i token written before modes to the mode its card implies, and token_not_found to the other',
    async (format) => {
      const live = await saveTokenWithoutMode(LIVE_CARD, format);
      const test = await saveTokenWithoutMode('4242424242424242', format);
      for (const [owner, token, other] of [
        [LIVE, live, TEST],
        [TEST, test, LIVE],
      ] as const) {
        expect(await codeOf(vault.getToken(other, token))).toBe('token_not_found');
        expect(await codeOf(vault.render(other, token, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain'))).toBe('token_not_found');
        expect(await codeOf(vault.preview(other, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
        expect(await codeOf(vault.deleteToken(other, token))).toBe('token_not_found');
        expect((await vault.getToken(owner, token)).cvvAvailable).toBe(true);
      }
      expect((await vault.render(LIVE, live, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toBe(`${LIVE_CARD}/987`);
      expect((await vault.render(TEST, test, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toBe('4242424242424242/987');
    },
  );

  it('rewrap writes the mode into records written before modes, bound into their encryption', async () => {
    const live = await saveTokenWithoutMode(LIVE_CARD, 1);
    const test = await saveTokenWithoutMode('4242424242424242', 2);
    const current = (await vault.tokenize(aCard({ number: LIVE_CARD }))).token;
    const { checkpoint } = await rewrapAll(store, ring, { batchSize: 10 });
    expect(checkpoint.stats).toMatchObject({ scanned: 3, migrated: 4, alreadyCurrent: 2, failed: 0 });
    for (const [token, mode] of [
      [live, 'live'],
      [test, 'test'],
    ] as const) {
      expect(await readRecord(db.client, cardKey(token))).toMatchObject({ v: 6, mode });
      expect(await readRecord(db.client, cvvKey(token))).toMatchObject({ v: 3, mode });
    }
    expect(await codeOf(vault.getToken(TEST, live))).toBe('token_not_found');
    expect((await vault.render(LIVE, live, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toBe(`${LIVE_CARD}/987`);
    expect(await codeOf(vault.render(LIVE, test, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect((await vault.render(TEST, test, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
    // Now bound in: flipping the migrated record's mode no longer renders it for the other mode.
    await editRecord(db.client, cardKey(live), (record) => ({ ...record, mode: 'test' }));
    expect(await codeOf(vault.render(TEST, live, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect(current).toMatch(/^tok\./);
  });
});
