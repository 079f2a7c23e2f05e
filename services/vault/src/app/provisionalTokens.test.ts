import { Redis } from 'ioredis';
import { expiryMonthEnd } from '@tessera/common';
import type { TokenOwner } from '../domain/card';
import { rewrapAll } from './keyRotation';
import { cardKey, cvvKey } from '../store/records';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aVault, anEmptyRedisCardStore, codeOf, editRecord, keyRingEntry, keyRingOf, readRecord } from '../test/builders';
import type { Vault } from './vault';
import { useRedisServer } from '@tessera/test-support';

/**
 * Issue 12, item 2: tokens made in a browser are provisional. They expire after
 * BROWSER_TOKEN_TTL_SECONDS unless the merchant's server retains them, which makes them ordinary.
 */
jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const k1 = keyRingEntry('k1');
const ring = keyRingOf(k1);
const OWNER: TokenOwner = { merchantId: 'merchant_a', mode: 'test' };
const BROWSER_TTL_S = 120;
const CVV_TTL_S = 600;
const GRACE_DAYS = 30;
const HOUR_MS = 3_600_000;

/** The vault's clock; Redis keeps real time, so moving this past a deadline is "a record that outlived it". */
let now: number;
let store: RedisCardStore;
let vault: Vault;

function vaultOn(keyRing = ring): Vault {
  return aVault({
    store,
    keyRing,
    cvvTtlSeconds: CVV_TTL_S,
    cardGraceDays: GRACE_DAYS,
    browserTokenTtlSeconds: BROWSER_TTL_S,
    now: () => new Date(now),
  });
}

beforeEach(async () => {
  now = Date.now();
  store = await anEmptyRedisCardStore(db);
  vault = vaultOn();
});

afterEach(async () => {
  await store.close();
});

/** The end of the card's expiry month (UTC-12) plus the grace period, as the vault computes it. */
function cardExpiry(expiryMonth: number, expiryYear: number): string {
  return new Date(expiryMonthEnd(expiryMonth, expiryYear).getTime() + GRACE_DAYS * 24 * HOUR_MS).toISOString();
}

async function pttl(key: string): Promise<number> {
  return db.client.pttl(key);
}

describe('provisional tokens (real redis-server)', () => {
  it('keeps a provisional card and its CVV for BROWSER_TOKEN_TTL_SECONDS only, and says so in the record', async () => {
    const record = await vault.tokenize(aCard({ provisional: true }));
    expect(record).toMatchObject({ provisional: true, cvvAvailable: true });
    expect(record.expiresAt).toBe(new Date(now + BROWSER_TTL_S * 1000).toISOString());
    for (const key of [cardKey(record.token), cvvKey(record.token)]) {
      expect(await pttl(key)).toBeGreaterThan((BROWSER_TTL_S - 10) * 1000);
      expect(await pttl(key)).toBeLessThanOrEqual(BROWSER_TTL_S * 1000);
    }
    expect(await readRecord(db.client, cardKey(record.token))).toMatchObject({ v: 6, mode: 'test', provisional: true });
    expect(await vault.getToken(OWNER, record.token)).toEqual(record);
  });

  it('keeps a provisional token made under card-testing attack for the shorter life the gateway asks, never a longer one', async () => {
    const shorter = await vault.tokenize(aCard({ provisional: true, provisionalTtlSeconds: 30 }));
    expect(shorter.expiresAt).toBe(new Date(now + 30_000).toISOString());
    expect(await pttl(cardKey(shorter.token))).toBeLessThanOrEqual(30_000);
    expect(await pttl(cvvKey(shorter.token))).toBeLessThanOrEqual(30_000);
    const longer = await vault.tokenize(aCard({ provisional: true, provisionalTtlSeconds: 86_400 }));
    expect(longer.expiresAt).toBe(new Date(now + BROWSER_TTL_S * 1000).toISOString());
    // Only a provisional token takes it: an ordinary one lives as long as its card.
    const ordinary = await vault.tokenize(aCard({ provisionalTtlSeconds: 30 }));
    expect(ordinary.provisional).toBe(false);
    expect(await pttl(cardKey(ordinary.token))).toBeGreaterThan(300 * 24 * HOUR_MS);
  });

  it('keeps a token made without the flag as long as its card, provisional false', async () => {
    const card = aCard();
    const record = await vault.tokenize(card);
    expect(record).toMatchObject({ provisional: false, expiresAt: cardExpiry(card.expiryMonth, card.expiryYear) });
    expect(await pttl(cardKey(record.token))).toBeGreaterThan(300 * 24 * HOUR_MS);
    expect(await pttl(cvvKey(record.token))).toBeGreaterThan((CVV_TTL_S - 10) * 1000);
    expect(await readRecord(db.client, cardKey(record.token))).not.toHaveProperty('provisional');
  });

  it('carries the flag item by item through tokenizeBatch', async () => {
    const outcomes = await vault.tokenizeBatch([aCard({ provisional: true }), aCard(), aCard({ provisional: false })]);
    expect(outcomes.map((o) => (o instanceof Error ? o : o.provisional))).toEqual([true, false, false]);
  });

  it('lets the merchant use a provisional token before it is retained: read, preview and render', async () => {
    const { token } = await vault.tokenize(aCard({ provisional: true }));
    expect((await vault.preview(OWNER, token, '[CARD_NUMBER]', 'text/plain')).body).toBe('424242******4242');
    expect((await vault.render(OWNER, token, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain')).toString()).toBe('4242424242424242/123');
  });

  it('retains a provisional token: flag off, lifetime of the card again, CVV for what is left of CVV_TTL_SECONDS', async () => {
    const card = aCard({ provisional: true });
    const created = await vault.tokenize(card);
    now += 60_000;
    const retained = await vault.retainToken(OWNER, created.token);
    expect(retained).toEqual({ ...created, provisional: false, expiresAt: cardExpiry(card.expiryMonth, card.expiryYear) });
    expect(await vault.getToken(OWNER, created.token)).toEqual(retained);
    expect(await pttl(cardKey(created.token))).toBeGreaterThan(300 * 24 * HOUR_MS);
    // Made 60 s ago (vault clock): the CVV keeps the rest of its 600 s, not a fresh 600 s.
    expect(await pttl(cvvKey(created.token))).toBeGreaterThan((CVV_TTL_S - 60 - 10) * 1000);
    expect(await pttl(cvvKey(created.token))).toBeLessThanOrEqual((CVV_TTL_S - 60) * 1000);
    expect(await readRecord(db.client, cardKey(created.token))).not.toHaveProperty('provisional');
    // Re-sealed without the deadline: it still renders, also long after the provisional deadline
    // (and the CVV's own sealed deadline: that one retaining never moves).
    now += 10 * BROWSER_TTL_S * 1000;
    expect((await vault.render(OWNER, created.token, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
    expect(await codeOf(vault.render(OWNER, created.token, '[CARD_CVV]', 'text/plain'))).toBe('cvv_unavailable');
  });

  it('is answered by dedupe once retained, never before', async () => {
    const provisional = await vault.tokenize(aCard({ provisional: true }));
    const deduplicated = await vault.tokenize(aCard({ dedupe: true }));
    expect(deduplicated).toMatchObject({ deduplicated: false, provisional: false });
    expect(deduplicated.token).not.toBe(provisional.token);

    const other = aCard({ number: '5555555555554444' });
    const retained = await vault.tokenize({ ...other, provisional: true });
    await vault.retainToken(OWNER, retained.token);
    expect(await vault.tokenize({ ...other, dedupe: true })).toMatchObject({ token: retained.token, deduplicated: true });
  });

  it('answers a second retain, and retains of ordinary tokens, with the same record and writes nothing', async () => {
    const { token } = await vault.tokenize(aCard({ provisional: true }));
    const first = await vault.retainToken(OWNER, token);
    const stored = await db.client.get(cardKey(token));
    expect(await vault.retainToken(OWNER, token)).toEqual(first);
    expect(await db.client.get(cardKey(token))).toBe(stored);

    const ordinary = await vault.tokenize(aCard());
    const before = await db.client.get(cardKey(ordinary.token));
    expect(await vault.retainToken(OWNER, ordinary.token)).toEqual(ordinary);
    expect(await db.client.get(cardKey(ordinary.token))).toBe(before);
  });

  it('retains once when two retains race, and both answer the retained record', async () => {
    const { token } = await vault.tokenize(aCard({ provisional: true }));
    const [a, b] = await Promise.all([vault.retainToken(OWNER, token), vault.retainToken(OWNER, token)]);
    expect(a).toEqual(b);
    expect(a.provisional).toBe(false);
  });

  it('answers token_not_found to retains of unknown, malformed, other merchants’ and other modes’ tokens, and changes nothing', async () => {
    const { token } = await vault.tokenize(aCard({ provisional: true }));
    const stored = await db.client.get(cardKey(token));
    for (const [owner, t] of [
      [OWNER, 'tok.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      [OWNER, 'not-a-token'],
      [{ merchantId: 'merchant_b', mode: 'test' }, token],
      [{ merchantId: 'merchant_a', mode: 'live' }, token],
      [{ merchantId: 'merchant_a', mode: '' }, token],
      [{ merchantId: '', mode: 'test' }, token],
    ] as const) {
      expect(await codeOf(vault.retainToken(owner, t))).toBe('token_not_found');
    }
    expect(await db.client.get(cardKey(token))).toBe(stored);
    expect((await vault.getToken(OWNER, token)).provisional).toBe(true);
  });

  it('treats a provisional token past its deadline as gone, even when its record outlived it', async () => {
    const { token } = await vault.tokenize(aCard({ provisional: true }));
    // An insider lifts the Redis TTL; the deadline inside the record still holds.
    await db.client.persist(cardKey(token));
    now += BROWSER_TTL_S * 1000;
    expect(await codeOf(vault.getToken(OWNER, token))).toBe('token_not_found');
    expect(await codeOf(vault.render(OWNER, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect(await codeOf(vault.preview(OWNER, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
    expect(await codeOf(vault.retainToken(OWNER, token))).toBe('token_not_found');
  });

  it.each([
    ['stripped of its flag', ({ provisional: _flag, ...record }: Record<string, unknown>) => record],
    ['given a later deadline', (record: Record<string, unknown>) => ({ ...record, expiresAt: '2099-01-01T00:00:00.000Z' })],
  ])(
    'refuses to render or retain a provisional card %s in the store (answered as missing), without burning its CVV',
    async (_what, edit) => {
      const { token } = await vault.tokenize(aCard({ provisional: true }));
      await editRecord(db.client, cardKey(token), edit);
      await db.client.persist(cardKey(token));
      now += BROWSER_TTL_S * 1000;
      expect(await codeOf(vault.render(OWNER, token, '[CARD_NUMBER]/[CARD_CVV]', 'text/plain'))).toBe('token_not_found');
      expect(await codeOf(vault.preview(OWNER, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
      expect(await codeOf(vault.retainToken(OWNER, token))).toBe('token_not_found');
      expect(await db.client.exists(cvvKey(token))).toBe(1);
    },
  );

  it('refuses to render a retained card whose flag was put back in the store', async () => {
    const { token } = await vault.tokenize(aCard({ provisional: true }));
    await vault.retainToken(OWNER, token);
    await editRecord(db.client, cardKey(token), (record) => ({ ...record, provisional: true, expiresAt: '2099-01-01T00:00:00.000Z' }));
    expect(await codeOf(vault.render(OWNER, token, '[CARD_NUMBER]', 'text/plain'))).toBe('token_not_found');
  });

  it('key rotation re-wraps a provisional card under its deadline, and the token can still be retained', async () => {
    const provisional = (await vault.tokenize(aCard({ provisional: true }))).token;
    const rotated = keyRingOf(k1, keyRingEntry('k2'));
    const { checkpoint } = await rewrapAll(store, rotated, { batchSize: 10 });
    expect(checkpoint.stats).toMatchObject({ scanned: 1, rewrapped: 2, failed: 0 });
    vault = vaultOn(rotated);
    expect(await pttl(cardKey(provisional))).toBeLessThanOrEqual(BROWSER_TTL_S * 1000);
    expect((await vault.getToken(OWNER, provisional)).provisional).toBe(true);
    expect((await vault.render(OWNER, provisional, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
    expect((await vault.retainToken(OWNER, provisional)).provisional).toBe(false);
    expect((await vault.render(OWNER, provisional, '[CARD_NUMBER]', 'text/plain')).toString()).toBe('4242424242424242');
  });

  it('never keeps a provisional token longer than its card', async () => {
    // A card that expires next month (at most ~2 months away), with no grace: shorter than the browser TTL below.
    const soon = new Date(now);
    soon.setUTCDate(15);
    soon.setUTCMonth(soon.getUTCMonth() + 1);
    const card = aCard({ provisional: true, expiryMonth: soon.getUTCMonth() + 1, expiryYear: soon.getUTCFullYear() });
    const shortVault = aVault({
      store,
      keyRing: ring,
      cvvTtlSeconds: CVV_TTL_S,
      cardGraceDays: 0,
      browserTokenTtlSeconds: 86_400 * 62,
      now: () => new Date(now),
    });
    const record = await shortVault.tokenize(card);
    expect(record.expiresAt).toBe(expiryMonthEnd(card.expiryMonth, card.expiryYear).toISOString());
  });
});
