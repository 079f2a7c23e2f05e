import { expiryMonthEnd } from '@tessera/common';
import { emitEvent, type EmissionObservers, type EventRecord } from '@tessera/merchant-data';
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

const BATCH = 200;

/**
 * token.expiring_soon: each stored (retained) card whose expiry month ends within `days`, once
 * per token and expiry month. A token gone meanwhile (deleted, expired) leaves the index.
 */
export async function sweepExpiringTokens(deps: VaultEventSweepDeps & { days: number }): Promise<{ recorded: number }> {
  const nowMs = deps.now().getTime();
  const untilMs = nowMs + deps.days * 86_400_000;
  await deps.index.pruneCards(nowMs);
  let recorded = 0;
  for await (const batch of deps.index.cardsEndingBetween(nowMs, untilMs, BATCH)) {
    for (const { token, month } of batch) {
      const card = await deps.store.getCard(token);
      if (card === null) {
        await deps.index.forget(token, month);
        continue;
      }
      // Records from before tokens had a mode are told nothing: their mode is the vault's guess.
      if (card.provisional === true || card.mode === undefined) continue;
      // An entry of the card's former month (its expiry changed since): its own month tells it.
      const endsAtMs = expiryMonthEnd(card.expiryMonth, card.expiryYear).getTime();
      if (endsAtMs <= nowMs || endsAtMs > untilMs) continue;
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
          onceForMs: (deps.days + 2) * 86_400_000,
        },
        deps,
      );
      if (outcome === 'recorded') recorded += 1;
    }
  }
  return { recorded };
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
