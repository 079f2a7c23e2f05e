import { Redis } from 'ioredis';
import { createLogger, expiryMonthEnd } from '@tessera/common';
import { RedisEventStore, type EventRecord } from '@tessera/merchant-data';
import { useRedisServer } from '@tessera/test-support';
import type { TokenOwner } from '../domain/card';
import { cardExpiryMonthKey, LEGACY_CARD_EXPIRY_INDEX, RedisExpiryIndex } from '../store/expiryIndex';
import { withExpiryIndex } from '../store/indexedCardStore';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aJumpingClock, aVault, anEmptyRedisCardStore, type JumpingClock } from '../test/builders';
import { sweepExpiredCvvs, sweepExpiringTokens } from './eventSweeps';
import type { Vault } from './vault';

/** Issue 27: the events only the vault can see, from the expiry index its card writes keep. */
jest.setTimeout(30_000);

const db = useRedisServer((url) => new Redis(url));
const OWNER: TokenOwner = { merchantId: 'merchant_a', mode: 'test' };
const PAN = '4242424242424242';
const CVV_TTL_S = 600;

let store: RedisCardStore;
let clock: JumpingClock;
let vault: Vault;
let index: RedisExpiryIndex;
let events: RedisEventStore;

beforeEach(async () => {
  store = await anEmptyRedisCardStore(db);
  clock = aJumpingClock(db.client);
  index = new RedisExpiryIndex(db.client);
  events = new RedisEventStore(db.client);
  const indexed = withExpiryIndex(store, index, createLogger('vault-test', 'silent'), clock.now);
  vault = aVault({ store: indexed, cvvTtlSeconds: CVV_TTL_S, now: clock.now });
});

afterEach(async () => {
  await store.close();
});

const deps = () => ({ recorder: events, store, index, now: clock.now });
const recorded = async (): Promise<EventRecord[]> => (await events.list(OWNER.merchantId, 'test', { limit: 50 })).data;

describe('token.expiring_soon', () => {
  it('is recorded once for a stored card whose expiry month ends within the days, not for later cards, provisional or deleted ones', async () => {
    const now = clock.now();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const soon = await vault.tokenize(aCard(thisMonth));
    await vault.tokenize(aCard({ expiryYear: now.getUTCFullYear() + 3 }));
    await vault.tokenize(aCard({ ...thisMonth, provisional: true }));
    const deleted = await vault.tokenize(aCard(thisMonth));
    await vault.deleteToken(OWNER, deleted.token);

    // 40 days: the current month ends within them whatever today's date.
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 1 });
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 0 });
    const [event] = await recorded();
    expect(event).toMatchObject({ type: 'token.expiring_soon', merchantId: 'merchant_a', mode: 'test' });
    expect(event?.data.object).toEqual({ id: soon.token, brand: 'visa', last4: '4242', ...thisMonth });
    // Its mark outlasts the 40 days the card stays in the window, so no later sweep tells it again.
    const month = `${thisMonth.expiryYear}-${String(thisMonth.expiryMonth).padStart(2, '0')}`;
    expect(await db.client.pttl(`tessera:events:{m:merchant_a}:once:test:token.expiring_soon:${soon.token}:${month}`)).toBeGreaterThan(
      40 * 86_400_000,
    );
    expect(JSON.stringify(await recorded())).not.toContain(PAN);
  });

  it('is recorded for every card of a batch tokenization, and not for a token deleted since', async () => {
    const now = clock.now();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const made = await vault.tokenizeBatch([aCard(thisMonth), aCard({ ...thisMonth, number: '5555555555554444' }), aCard(thisMonth)]);
    const tokens = made.map((r) => (r instanceof Error ? '' : r.token));
    await vault.deleteToken(OWNER, tokens[2]!);
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 2 });
    expect((await recorded()).map((e) => e.data.object.id).sort()).toEqual([tokens[0], tokens[1]].sort());
  });

  it('is recorded for every card an import batch made, once for a card twice in the batch', async () => {
    const now = clock.now();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const card = { ...thisMonth, cvv: '', dedupe: true };
    const made = await vault.tokenizeDeduplicatedMany([aCard(card), aCard({ ...card, number: '5555555555554444' }), aCard(card)]);
    const tokens = made.map((r) => (r instanceof Error ? '' : r.token));
    expect(tokens[2]).toBe(tokens[0]);
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 2 });
    expect((await recorded()).map((e) => e.data.object.id).sort()).toEqual([tokens[0], tokens[1]].sort());
  });

  it('is recorded for a card listed in the sorted set of earlier releases, which the sweep empties into the month sets', async () => {
    const now = clock.now();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const later = { expiryMonth: 3, expiryYear: now.getUTCFullYear() + 2 };
    const soon = await vault.tokenize(aCard(thisMonth));
    const notYet = await vault.tokenize(aCard(later));
    // As an earlier release left them: in the one sorted set, by their month's end, and nowhere else.
    await db.client.del(cardExpiryMonthKey(thisMonth), cardExpiryMonthKey(later));
    await db.client.zadd(
      LEGACY_CARD_EXPIRY_INDEX,
      expiryMonthEnd(thisMonth.expiryMonth, thisMonth.expiryYear).getTime(),
      soon.token,
      expiryMonthEnd(later.expiryMonth, later.expiryYear).getTime(),
      notYet.token,
    );

    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 1 });
    expect((await recorded()).map((e) => e.data.object.id)).toEqual([soon.token]);
    expect(await db.client.exists(LEGACY_CARD_EXPIRY_INDEX)).toBe(0);
    expect(await db.client.smembers(cardExpiryMonthKey(later))).toEqual([notYet.token]);
    // Moved, not lost: the later card is told once its month comes near.
    await clock.advance(expiryMonthEnd(later.expiryMonth, later.expiryYear).getTime() - clock.now().getTime() - 10 * 86_400_000);
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 1 });
  });

  it('is recorded for the new expiry month only, once a dedupe moved the card to a later one', async () => {
    const now = clock.now();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const first = await vault.tokenize(aCard({ ...thisMonth, dedupe: true }));
    const renewed = await vault.tokenize(aCard({ expiryMonth: thisMonth.expiryMonth, expiryYear: thisMonth.expiryYear + 3, dedupe: true }));
    expect(renewed.token).toBe(first.token);
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 0 });
  });

  it('leaves no entry behind for a deleted token', async () => {
    const now = clock.now();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const kept = await vault.tokenize(aCard(thisMonth));
    const deleted = await vault.tokenize(aCard(thisMonth));
    await vault.deleteToken(OWNER, deleted.token);
    expect(await db.client.smembers(cardExpiryMonthKey(thisMonth))).toEqual([kept.token]);
  });

  it('is recorded for a provisional token once it is retained', async () => {
    const now = clock.now();
    const thisMonth = { expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() };
    const provisional = await vault.tokenize(aCard({ ...thisMonth, provisional: true }));
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 0 });
    await vault.retainToken(OWNER, provisional.token);
    expect(await sweepExpiringTokens({ ...deps(), days: 40 })).toEqual({ recorded: 1 });
  });
});

describe('cvv.expired_unused', () => {
  it('is recorded once for a CVV that expired without a Render taking it, not for one that was used', async () => {
    const unused = await vault.tokenize(aCard());
    const used = await vault.tokenize(aCard());
    await vault.render(OWNER, used.token, '{"cvc":"[CARD_CVV]"}', 'application/json');
    expect(await sweepExpiredCvvs(deps())).toEqual({ recorded: 0 });

    await clock.advance(CVV_TTL_S * 1000 + 1000);
    expect(await sweepExpiredCvvs(deps())).toEqual({ recorded: 1 });
    expect(await sweepExpiredCvvs(deps())).toEqual({ recorded: 0 });
    const events = await recorded();
    expect(events.map((e) => [e.type, e.merchantId, e.mode, e.data.object.id])).toEqual([
      ['cvv.expired_unused', 'merchant_a', 'test', unused.token],
    ]);
    expect(JSON.stringify(events)).not.toMatch(/"123"|4242424242424242/);
  });

  it('waits while the CVV is still stored, and tells of a CVV attached later on its own deadline', async () => {
    const token = (await vault.tokenize(aCard({ cvv: '' }))).token;
    await vault.attachCvv(OWNER, token, { value: '321', isInteger: false });
    await clock.advance(CVV_TTL_S * 1000 - 5000);
    expect(await sweepExpiredCvvs(deps())).toEqual({ recorded: 0 });
    await clock.advance(10_000);
    expect(await sweepExpiredCvvs(deps())).toEqual({ recorded: 1 });
  });
});
