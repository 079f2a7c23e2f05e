import type { Logger } from '@tessera/common';
import type { StoredCard, StoredCvv } from '../domain/card';
import type { RecordKind } from '../domain/envelope';
import type { CardEntryToSave, CardStore, FingerprintClaim, SaveOutcome, StoreHealth, TakenCvv } from './cardStore';
import type { ExpiryIndex } from './expiryIndex';
import type { RawRecord } from './records';

/**
 * The card store with the cvv.expired_unused sweep's index kept beside it (store/expiryIndex.ts): a
 * wrapper, so the vault's use cases and the store's own writes stay as they were. The index is
 * written after the store's write succeeded and is best effort: a failure is logged (the token
 * only) and costs at most an event, never a card write. A CVV is listed from attach until taken,
 * deleted or swept. Cards are not indexed: token.expiring_soon reads the card records.
 */
export function withExpiryIndex(
  store: CardStore,
  index: ExpiryIndex,
  logger: Pick<Logger, 'warn'>,
  now: () => Date = () => new Date(),
): CardStore {
  return new IndexedCardStore(store, index, logger, now);
}

class IndexedCardStore implements CardStore {
  constructor(
    private readonly store: CardStore,
    private readonly index: ExpiryIndex,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly now: () => Date,
  ) {}

  private async bestEffort(what: string, op: () => Promise<void>): Promise<void> {
    try {
      await op();
    } catch (err) {
      this.logger.warn(
        { err: err instanceof Error ? err.message : 'unknown', index: what },
        'expiry index not updated: an expiry event may be missed',
      );
    }
  }

  private async noteSavedCvv(token: string, cvv: NonNullable<CardEntryToSave['cvv']>): Promise<void> {
    const deadline = cvv.record.expiresAt !== undefined ? Date.parse(cvv.record.expiresAt) : this.now().getTime() + cvv.ttlMs;
    await this.bestEffort('cvv', () => this.index.noteCvv(token, deadline));
  }

  async save(entry: CardEntryToSave): Promise<void> {
    await this.store.save(entry);
    if (entry.cvv !== undefined) await this.noteSavedCvv(entry.token, entry.cvv);
  }

  async saveMany(entries: readonly CardEntryToSave[]): Promise<SaveOutcome[]> {
    const outcomes = await this.store.saveMany(entries);
    const saved = entries.filter((_, i) => outcomes[i]?.saved === true);
    await Promise.all(saved.map((entry) => (entry.cvv !== undefined ? this.noteSavedCvv(entry.token, entry.cvv) : undefined)));
    return outcomes;
  }

  async retainCard(token: string, expected: RawRecord, next: StoredCard, ttl: { cardTtlMs: number; cvvTtlMs: number }): Promise<boolean> {
    const replaced = await this.store.retainCard(token, expected, next, ttl);
    if (replaced && ttl.cvvTtlMs > 0)
      await this.bestEffort('cvv', () => this.index.noteCvv(token, this.now().getTime() + ttl.cvvTtlMs, true));
    return replaced;
  }

  async putCvv(token: string, record: StoredCvv, ttlMs: number): Promise<void> {
    await this.store.putCvv(token, record, ttlMs);
    const deadline = record.expiresAt !== undefined ? Date.parse(record.expiresAt) : this.now().getTime() + ttlMs;
    await this.bestEffort('cvv', () => this.index.noteCvv(token, deadline));
  }

  async takeCvv(token: string, identify: (record: StoredCvv) => { id: string; rememberMs: number }): Promise<TakenCvv | null> {
    const taken = await this.store.takeCvv(token, identify);
    // Used (or a replayed copy, refused): either way not "expired unused".
    if (taken !== null) await this.bestEffort('cvv', () => this.index.forgetCvv(token));
    return taken;
  }

  async delete(token: string): Promise<boolean> {
    const existed = await this.store.delete(token);
    await this.bestEffort('cvv', () => this.index.forgetCvv(token));
    return existed;
  }

  // Everything else is the card store's own.
  getCard(token: string): Promise<StoredCard | null> {
    return this.store.getCard(token);
  }
  getCvv(token: string): Promise<StoredCvv | null> {
    return this.store.getCvv(token);
  }
  hasCvv(token: string): Promise<boolean> {
    return this.store.hasCvv(token);
  }
  ping(): Promise<StoreHealth> {
    return this.store.ping();
  }
  scanTokens(cursor: string, count: number): Promise<{ cursor: string; tokens: string[] }> {
    return this.store.scanTokens(cursor, count);
  }
  readRaw(kind: RecordKind, token: string): Promise<RawRecord | null> {
    return this.store.readRaw(kind, token);
  }
  replaceRaw(kind: RecordKind, token: string, expected: RawRecord | string, next: RawRecord | string): Promise<boolean> {
    return this.store.replaceRaw(kind, token, expected, next);
  }
  getFingerprintKey(): Promise<string | null> {
    return this.store.getFingerprintKey();
  }
  createFingerprintKey(stored: string): Promise<string> {
    return this.store.createFingerprintKey(stored);
  }
  replaceFingerprintKey(expected: string, next: string): Promise<boolean> {
    return this.store.replaceFingerprintKey(expected, next);
  }
  findByFingerprint(fingerprint: string): Promise<string | null> {
    return this.store.findByFingerprint(fingerprint);
  }
  claimFingerprint(fingerprint: string, token: string, replacing: string | null, ttlMs: number): Promise<string> {
    return this.store.claimFingerprint(fingerprint, token, replacing, ttlMs);
  }
  findByFingerprints(fingerprints: readonly string[]): Promise<Array<string | null>> {
    return this.store.findByFingerprints(fingerprints);
  }
  claimFingerprints(claims: readonly FingerprintClaim[]): Promise<string[]> {
    return this.store.claimFingerprints(claims);
  }
  releaseFingerprint(fingerprint: string, token: string): Promise<void> {
    return this.store.releaseFingerprint(fingerprint, token);
  }
  findAlias(merchantId: string, mode: string, aliasDigest: string): Promise<string | null> {
    return this.store.findAlias(merchantId, mode, aliasDigest);
  }
  claimAlias(merchantId: string, mode: string, aliasDigest: string, token: string, ttlMs: number): Promise<boolean> {
    return this.store.claimAlias(merchantId, mode, aliasDigest, token, ttlMs);
  }
  releaseAliases(merchantId: string, mode: string, aliasDigests: readonly string[], token: string): Promise<void> {
    return this.store.releaseAliases(merchantId, mode, aliasDigests, token);
  }
  aliasesOf(token: string): Promise<Record<string, string>> {
    return this.store.aliasesOf(token);
  }
  addTokenAlias(token: string, format: string, alias: string, ttlMs: number): Promise<string> {
    return this.store.addTokenAlias(token, format, alias, ttlMs);
  }
  extendAliases(merchantId: string, mode: string, token: string, aliasDigests: readonly string[], ttlMs: number): Promise<void> {
    return this.store.extendAliases(merchantId, mode, token, aliasDigests, ttlMs);
  }
  getCheckpoint(name: string): Promise<string | null> {
    return this.store.getCheckpoint(name);
  }
  setCheckpoint(name: string, value: string | null): Promise<void> {
    return this.store.setCheckpoint(name, value);
  }
  close(): Promise<void> {
    return this.store.close();
  }
}
