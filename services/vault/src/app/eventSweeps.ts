import { expiryMonthEnd, TesseraError } from '@tessera/common';
import { emitEvent, type EmissionObservers, type EventRecord } from '@tessera/merchant-data';
import type { StoredCard } from '../domain/card';
import type { CardStore } from '../store/cardStore';
import type { ExpiryIndex } from '../store/expiryIndex';

/**
 * Where the vault records the two events only it can see (docs/adr/0012-vault-records-its-expiry-events.md):
 * @tessera/merchant-data's RedisEventStore, behind this port. The events carry the token id,
 * brand, last4 and expiry at most, read from the card record's clear fields: nothing is decrypted.
 */
export interface EventRecorder {
  record(event: EventRecord): Promise<void>;
  recordOnce(event: EventRecord, once: string, markForMs?: number): Promise<boolean>;
}

export interface VaultEventSweepDeps extends EmissionObservers {
  recorder: EventRecorder;
  store: Pick<CardStore, 'getCard' | 'hasCvv'>;
  index: ExpiryIndex;
  now: () => Date;
}

export interface ExpiringTokensSweepDeps extends VaultEventSweepDeps {
  store: Pick<CardStore, 'getCard' | 'hasCvv' | 'scanTokens' | 'getCheckpoint' | 'setCheckpoint'>;
  days: number;
  /** A new pass over every card record starts this long after the last one started (a day in production). */
  passEveryMs: number;
  /** Time this call may go on for; it stops after the first batch past it and the next call resumes. */
  budgetMs: number;
  /** SCAN COUNT per batch, and the pause between batches (so a pass over millions of cards does not hog Redis). */
  scanCount?: number;
  pauseMs?: number;
}

const BATCH = 200;
const SCAN_COUNT = 1000;
const PAUSE_MS = 20;
const DAY_MS = 86_400_000;
/** Where the pass is: its start and its SCAN cursor (null once done). Absent before the first pass ever. */
const CHECKPOINT = 'token-expiring-soon';

interface PassState {
  startedAtMs: number;
  cursor: string | null;
}

/** undefined for no checkpoint or one this build cannot read: a new pass starts. */
function parsePass(text: string | null): PassState | undefined {
  if (text === null) return undefined;
  let parsed: Partial<PassState>;
  try {
    parsed = JSON.parse(text) as Partial<PassState>;
  } catch {
    return undefined;
  }
  const { startedAtMs, cursor } = parsed;
  if (typeof startedAtMs !== 'number' || (cursor !== null && typeof cursor !== 'string')) return undefined;
  return { startedAtMs, cursor };
}

/**
 * A pass is due a day (passEveryMs) after the last began, or as soon as a month's end has entered
 * the window since: every card of that month becomes due at the same instant, so its cards are not
 * told up to a day late. Cards tokenized with a month already in the window wait for the next pass.
 */
function passDue(last: PassState, nowMs: number, deps: ExpiringTokensSweepDeps): boolean {
  if (nowMs - last.startedAtMs >= deps.passEveryMs) return true;
  return monthsEndingBetween(last.startedAtMs + deps.days * DAY_MS, nowMs + deps.days * DAY_MS).length > 0;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A record that cannot be read (tampered, unknown version) is skipped; Redis being down stops the batch. */
async function readCard(store: Pick<CardStore, 'getCard'>, token: string): Promise<StoredCard | null> {
  try {
    return await store.getCard(token);
  } catch (err) {
    if (err instanceof TesseraError && err.code === 'service_unavailable') throw err;
    return null;
  }
}

/**
 * token.expiring_soon: each stored (retained) card whose expiry month ends within `days`, once per
 * token and expiry month. No index: a pass SCANs the card records (every master of a Cluster, as
 * rewrap does) and reads their clear fields, nothing decrypted, in batches of `scanCount` keys with
 * their GETs sent together and a pause between batches. The cursor is checkpointed after every
 * batch, so a call that runs out of budget, or a replica that stops, leaves the rest to the next
 * call of whichever replica holds the sweep lease. A card the SCAN returns twice, or seen again by a
 * later pass, is told once: the event's once-mark outlasts the card's time in the window.
 */
export async function sweepExpiringTokens(deps: ExpiringTokensSweepDeps): Promise<{ recorded: number; scanned: number }> {
  const startMs = deps.now().getTime();
  const saved = await deps.store.getCheckpoint(CHECKPOINT);
  const last = parsePass(saved);
  // The first pass ever after an upgrade: the card expiry indexes of earlier builds go, once.
  if (saved === null) await deps.index.dropCardIndexes();
  if (last?.cursor === null && !passDue(last, startMs, deps)) return { recorded: 0, scanned: 0 };
  const pass = last?.cursor != null ? last : { startedAtMs: startMs, cursor: '0' };
  let cursor = pass.cursor ?? '0';
  let recorded = 0;
  let scanned = 0;
  for (;;) {
    const nowMs = deps.now().getTime();
    const step = await deps.store.scanTokens(cursor, deps.scanCount ?? SCAN_COUNT).catch(async (err: unknown) => {
      // A cursor a resharded Cluster no longer knows: the next call starts the pass over.
      if (!(err instanceof TesseraError) && cursor !== '0')
        await deps.store.setCheckpoint(CHECKPOINT, JSON.stringify({ ...pass, cursor: '0' }));
      throw err;
    });
    const cards = await Promise.all(step.tokens.map((token) => readCard(deps.store, token)));
    scanned += step.tokens.length;
    for (const [i, card] of cards.entries()) {
      if (card !== null && (await tellExpiring(deps, step.tokens[i] as string, card, nowMs))) recorded += 1;
    }
    cursor = step.cursor;
    await deps.store.setCheckpoint(CHECKPOINT, JSON.stringify({ startedAtMs: pass.startedAtMs, cursor: cursor === '0' ? null : cursor }));
    if (cursor === '0' || deps.now().getTime() - startMs >= deps.budgetMs) return { recorded, scanned };
    await pause(deps.pauseMs ?? PAUSE_MS);
  }
}

/** True when the card's event was recorded now (not before, not failed, not due). */
async function tellExpiring(deps: ExpiringTokensSweepDeps, token: string, card: StoredCard, nowMs: number): Promise<boolean> {
  // Records from before tokens had a mode are told nothing: their mode is the vault's guess.
  if (card.provisional === true || card.mode === undefined) return false;
  const endsAtMs = expiryMonthEnd(card.expiryMonth, card.expiryYear).getTime();
  if (endsAtMs <= nowMs || endsAtMs > nowMs + deps.days * DAY_MS) return false;
  const monthText = `${card.expiryYear}-${String(card.expiryMonth).padStart(2, '0')}`;
  const outcome = await emitEvent(
    deps.recorder,
    {
      type: 'token.expiring_soon',
      merchantId: card.merchantId,
      mode: card.mode,
      object: { id: token, brand: card.brand, last4: card.last4, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear },
      once: `token.expiring_soon:${token}:${monthText}`,
      // The card stays in the window for `days`: its mark must outlast that, whatever the event retention.
      onceForMs: (deps.days + 2) * DAY_MS,
    },
    deps,
  );
  return outcome === 'recorded';
}

/**
 * cvv.expired_unused: a CVV whose deadline passed without a Render taking it (taking removes it
 * from the index). One still in Redis (a retain gave it longer, or Redis has not expired it yet)
 * waits for a later sweep; one whose card is gone is dropped silently (the token no longer exists).
 */
export async function sweepExpiredCvvs(deps: VaultEventSweepDeps): Promise<{ recorded: number }> {
  let recorded = 0;
  for (;;) {
    const due = await deps.index.cvvsDueBy(deps.now().getTime(), BATCH);
    let handled = 0;
    for (const { token, expiresAtMs } of due) {
      if (await deps.store.hasCvv(token)) continue;
      const card = await deps.store.getCard(token);
      if (card !== null && card.mode !== undefined) {
        const outcome = await emitEvent(
          deps.recorder,
          {
            type: 'cvv.expired_unused',
            merchantId: card.merchantId,
            mode: card.mode,
            object: { id: token, expiredAt: Math.floor(expiresAtMs / 1000) },
            once: `cvv.expired_unused:${token}:${expiresAtMs}`,
          },
          deps,
        );
        if (outcome === 'failed') continue;
        if (outcome === 'recorded') recorded += 1;
      }
      await deps.index.forgetCvvAt(token, expiresAtMs);
      handled += 1;
    }
    if (due.length < BATCH || handled < due.length) return { recorded };
  }
}

/** The card months whose end (expiryMonthEnd) falls in (fromMs, toMs]. */
export function monthsEndingBetween(fromMs: number, toMs: number): Array<{ expiryMonth: number; expiryYear: number }> {
  const months: Array<{ expiryMonth: number; expiryYear: number }> = [];
  // A month ends on the next month's first day (expiryMonthEnd): start a month early.
  const start = new Date(fromMs);
  for (let m = start.getUTCMonth() - 1; ; m++) {
    const month = { expiryYear: start.getUTCFullYear() + Math.floor(m / 12), expiryMonth: (((m % 12) + 12) % 12) + 1 };
    const end = expiryMonthEnd(month.expiryMonth, month.expiryYear).getTime();
    if (end > toMs) return months;
    if (end > fromMs) months.push(month);
  }
}
