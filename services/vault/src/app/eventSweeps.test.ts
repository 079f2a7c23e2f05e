import { Redis } from 'ioredis';
import { createLogger, expiryMonthEnd } from '@tessera/common';
import { RedisEventStore, type EventRecord } from '@tessera/merchant-data';
import { useRedisServer } from '@tessera/test-support';
import type { TokenOwner } from '../domain/card';
import { LEGACY_CARD_EXPIRY_INDEX, RedisExpiryIndex } from '../store/expiryIndex';
import { checkpointKey } from '../store/records';
import { withExpiryIndex } from '../store/indexedCardStore';
import type { RedisCardStore } from '../store/redisCardStore';
import { aCard, aJumpingClock, aVault, anEmptyRedisCardStore, type JumpingClock } from '../test/builders';
import { sweepExpiredCvvs, sweepExpiringTokens } from './eventSweeps';
import type { Vault } from './vault';

/** Issue 27: the events only the vault can see, from its card records and the CVV expiry index its CVV writes keep. */
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
  const DAY = 86_400_000;
  const sweep = (more: { budgetMs?: number; scanCount?: number } = {}) =>
    sweepExpiringTokens({ ...deps(), days: 40, passEveryMs: DAY, budgetMs: 60_000, pauseMs: 0, ...more });
  /** The next day's pass: a pass is due a day after the last began. */
  const nextDay = () => clock.advance(DAY);
  const thisMonthOf = (now: Date) => ({ expiryMonth: now.getUTCMonth() + 1, expiryYear: now.getUTCFullYear() });
  const told = async (): Promise<unknown[]> => (await recorded()).map((e) => e.data.object.id).sort();

  it('is recorded once for a stored card whose expiry month ends within the days, not for later cards, provisional or deleted ones', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const soon = await vault.tokenize(aCard(thisMonth));
    await vault.tokenize(aCard({ expiryYear: thisMonth.expiryYear + 3 }));
    await vault.tokenize(aCard({ ...thisMonth, provisional: true }));
    const deleted = await vault.tokenize(aCard(thisMonth));
    await vault.deleteToken(OWNER, deleted.token);

    // 40 days: the current month ends within them whatever today's date.
    expect(await sweep()).toEqual({ recorded: 1, scanned: 3 });
    // The next pass reads the card again (the provisional token has expired) and tells nothing: its once-mark outlasts its time in the window.
    await nextDay();
    expect(await sweep()).toEqual({ recorded: 0, scanned: 2 });
    const [event] = await recorded();
    expect(event).toMatchObject({ type: 'token.expiring_soon', merchantId: 'merchant_a', mode: 'test' });
    expect(event?.data.object).toEqual({ id: soon.token, brand: 'visa', last4: '4242', ...thisMonth });
    const month = `${thisMonth.expiryYear}-${String(thisMonth.expiryMonth).padStart(2, '0')}`;
    expect(await db.client.pttl(`tessera:events:{m:merchant_a}:once:test:token.expiring_soon:${soon.token}:${month}`)).toBeGreaterThan(
      38 * DAY,
    );
    expect(JSON.stringify(await recorded())).not.toContain(PAN);
  });

  it('reads the card records once a day, and again as soon as a month has entered the window', async () => {
    const now = clock.now();
    const later = thisMonthOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 3, 10)));
    const entersWindowAt = expiryMonthEnd(later.expiryMonth, later.expiryYear).getTime() - 40 * DAY;
    await clock.advanceTo(entersWindowAt - 3_600_000);
    const token = (await vault.tokenize(aCard(later))).token;
    expect(await sweep()).toEqual({ recorded: 0, scanned: 1 });
    await clock.advance(1_800_000);
    expect(await sweep()).toEqual({ recorded: 0, scanned: 0 });
    // Within the hour its month's end entered the 40 days: a pass now, not a day after the last.
    await clock.advance(3_600_000);
    expect(await sweep()).toEqual({ recorded: 1, scanned: 1 });
    expect(await told()).toEqual([token]);
  });

  it('is recorded for every card of a batch tokenization, and not for a token deleted since', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const made = await vault.tokenizeBatch([aCard(thisMonth), aCard({ ...thisMonth, number: '5555555555554444' }), aCard(thisMonth)]);
    const tokens = made.map((r) => (r instanceof Error ? '' : r.token));
    await vault.deleteToken(OWNER, tokens[2]!);
    expect(await sweep()).toMatchObject({ recorded: 2 });
    expect(await told()).toEqual([tokens[0], tokens[1]].sort());
  });

  it('is recorded for every card an import batch made, once for a card twice in the batch', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const card = { ...thisMonth, cvv: '', dedupe: true };
    const made = await vault.tokenizeDeduplicatedMany([aCard(card), aCard({ ...card, number: '5555555555554444' }), aCard(card)]);
    const tokens = made.map((r) => (r instanceof Error ? '' : r.token));
    expect(tokens[2]).toBe(tokens[0]);
    expect(await sweep()).toMatchObject({ recorded: 2 });
    expect(await told()).toEqual([tokens[0], tokens[1]].sort());
  });

  it('resumes a pass where a call stopped, and tells every card once', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const made = await vault.tokenizeBatch(Array.from({ length: 12 }, () => aCard(thisMonth)));
    const tokens = made.map((r) => (r instanceof Error ? '' : r.token));
    // No budget: each call reads one batch and stops, as a vault stopped mid-pass; the next resumes from the checkpoint.
    const calls: Array<{ recorded: number; scanned: number }> = [];
    do calls.push(await sweep({ budgetMs: 0, scanCount: 2 }));
    while ((await db.client.get(checkpointKey('token-expiring-soon')))?.includes('"cursor":null') !== true);
    expect(calls.length).toBeGreaterThan(2);
    expect(calls.reduce((sum, call) => sum + call.scanned, 0)).toBe(12);
    expect(calls.reduce((sum, call) => sum + call.recorded, 0)).toBe(12);
    expect(await told()).toEqual([...tokens].sort());
    expect(await sweep()).toEqual({ recorded: 0, scanned: 0 });
  });

  it('unlinks the card expiry index of earlier builds on its first pass, and tells its cards from the records', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const soon = await vault.tokenize(aCard(thisMonth));
    await db.client.zadd(LEGACY_CARD_EXPIRY_INDEX, expiryMonthEnd(thisMonth.expiryMonth, thisMonth.expiryYear).getTime(), soon.token);
    expect(await sweep()).toEqual({ recorded: 1, scanned: 1 });
    expect(await db.client.exists(LEGACY_CARD_EXPIRY_INDEX)).toBe(0);
  });

  it('writes no card expiry index', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const token = (await vault.tokenize(aCard({ ...thisMonth, cvv: '' }))).token;
    await vault.updateToken(OWNER, token, { expiryYear: thisMonth.expiryYear + 1 });
    expect((await db.client.keys('*')).filter((key) => key.includes('expiry'))).toEqual([]);
  });

  it('is recorded for the new expiry month only, once a dedupe or an update moved the card to a later one', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const first = await vault.tokenize(aCard({ ...thisMonth, dedupe: true }));
    const renewed = await vault.tokenize(aCard({ expiryMonth: thisMonth.expiryMonth, expiryYear: thisMonth.expiryYear + 3, dedupe: true }));
    expect(renewed.token).toBe(first.token);
    const updated = await vault.tokenize(aCard({ ...thisMonth, number: '5555555555554444' }));
    await vault.updateToken(OWNER, updated.token, { expiryYear: thisMonth.expiryYear + 2 });
    expect(await sweep()).toEqual({ recorded: 0, scanned: 2 });
    // Two years on, the updated card's new month comes near: told for it, once.
    const later = { expiryMonth: thisMonth.expiryMonth, expiryYear: thisMonth.expiryYear + 2 };
    await clock.advance(expiryMonthEnd(later.expiryMonth, later.expiryYear).getTime() - clock.now().getTime() - 10 * DAY);
    expect(await sweep()).toMatchObject({ recorded: 1 });
    expect((await recorded()).map((e) => e.data.object)).toEqual([expect.objectContaining({ id: updated.token, ...later })]);
  });

  it('is recorded for a provisional token once it is retained', async () => {
    const thisMonth = thisMonthOf(clock.now());
    const provisional = await vault.tokenize(aCard({ ...thisMonth, provisional: true }));
    expect(await sweep()).toEqual({ recorded: 0, scanned: 1 });
    await vault.retainToken(OWNER, provisional.token);
    await nextDay();
    expect(await sweep()).toEqual({ recorded: 1, scanned: 1 });
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
