import { expiryMonthEnd, type Logger } from '@tessera/common';
import type { StoredCard } from '../domain/card';
import type { CardEntryToSave, CardStore, SaveOutcome, TakenCvv } from './cardStore';
import type { ExpiryIndex } from './expiryIndex';

/** The instant a card stops being valid everywhere (docs/adr/0003): what the index sorts by. */
export function cardMonthEndMs(card: Pick<StoredCard, 'expiryMonth' | 'expiryYear'>): number {
  return expiryMonthEnd(card.expiryMonth, card.expiryYear).getTime();
}

/**
 * The card store with the events sweeps' expiry index kept beside it (store/expiryIndex.ts): a
 * wrapper, so the vault's use cases and the store's own writes stay as they were. The index is
 * written after the store's write succeeded and is best effort: a failure is logged (the token
 * only) and costs at most an event, never a card write. Provisional tokens get no card entry
 * until retained (most are never kept); a CVV is listed from attach until taken, deleted or swept.
 */
export function withExpiryIndex(
  store: CardStore,
  index: ExpiryIndex,
  logger: Pick<Logger, 'warn'>,
  now: () => Date = () => new Date(),
): CardStore {
  const bestEffort = async (what: string, op: () => Promise<void>): Promise<void> => {
    try {
      await op();
    } catch (err) {
      logger.warn(
        { err: err instanceof Error ? err.message : 'unknown', index: what },
        'expiry index not updated: an expiry event may be missed',
      );
    }
  };
  const noteSaved = async (entry: CardEntryToSave): Promise<void> => {
    if (entry.card.provisional !== true) await bestEffort('card', () => index.noteCard(entry.token, cardMonthEndMs(entry.card)));
    const cvv = entry.cvv;
    if (cvv !== undefined) {
      const deadline = cvv.record.expiresAt !== undefined ? Date.parse(cvv.record.expiresAt) : now().getTime() + cvv.ttlMs;
      await bestEffort('cvv', () => index.noteCvv(entry.token, deadline));
    }
  };
  const wrapped: CardStore = Object.create(store) as CardStore;
  return Object.assign(wrapped, {
    async save(entry: CardEntryToSave): Promise<void> {
      await store.save(entry);
      await noteSaved(entry);
    },
    async saveMany(entries: readonly CardEntryToSave[]): Promise<SaveOutcome[]> {
      const outcomes = await store.saveMany(entries);
      await Promise.all(entries.map((entry, i) => (outcomes[i]?.saved ? noteSaved(entry) : undefined)));
      return outcomes;
    },
    async retainCard(token: string, expected: string, next: StoredCard, ttl: { cardTtlMs: number; cvvTtlMs: number }): Promise<boolean> {
      const replaced = await store.retainCard(token, expected, next, ttl);
      if (replaced && next.provisional !== true) await bestEffort('card', () => index.noteCard(token, cardMonthEndMs(next)));
      if (replaced && ttl.cvvTtlMs > 0) await bestEffort('cvv', () => index.noteCvv(token, now().getTime() + ttl.cvvTtlMs, true));
      return replaced;
    },
    async putCvv(token: string, record: Parameters<CardStore['putCvv']>[1], ttlMs: number): Promise<void> {
      await store.putCvv(token, record, ttlMs);
      const deadline = record.expiresAt !== undefined ? Date.parse(record.expiresAt) : now().getTime() + ttlMs;
      await bestEffort('cvv', () => index.noteCvv(token, deadline));
    },
    async takeCvv(token: string, identify: Parameters<CardStore['takeCvv']>[1]): Promise<TakenCvv | null> {
      const taken = await store.takeCvv(token, identify);
      // Used (or a replayed copy, refused): either way not "expired unused".
      if (taken !== null) await bestEffort('cvv', () => index.forgetCvv(token));
      return taken;
    },
    async delete(token: string): Promise<boolean> {
      const existed = await store.delete(token);
      await bestEffort('both', () => index.forget(token));
      return existed;
    },
  });
}
