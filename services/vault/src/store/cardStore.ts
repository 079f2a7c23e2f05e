import type { StoredCard, StoredCvv } from '../domain/card';
import type { RecordKind } from '../domain/envelope';
import type { RawRecord } from './records';
import type { TesseraError } from '@tessera/common';

export interface CardEntryToSave {
  token: string;
  card: StoredCard;
  cardTtlMs: number;
  /** Absent when no CVV was given. */
  cvv?: { record: StoredCvv; ttlMs: number } | undefined;
  /** The token's aliases by format, already claimed in the alias index (claimAlias); written with the card. */
  aliases?: Readonly<Record<string, string>> | undefined;
}

/** One claim of claimFingerprints: claimFingerprint's arguments. */
export interface FingerprintClaim {
  fingerprint: string;
  token: string;
  replacing: string | null;
  ttlMs: number;
}

export type TakenCvv = { outcome: 'taken'; record: StoredCvv } | { outcome: 'replayed' };

/** What became of one entry of saveMany: only a saved entry's token may be handed out. */
export type SaveOutcome = { saved: true } | { saved: false; error: TesseraError };

export interface StoreHealth {
  ok: boolean;
  detail: string;
}

/**
 * Where tokens live. Implementations keep the card and its CVV under separate TTLs and throw
 * TesseraError('service_unavailable') when the backing store cannot answer, never hang.
 */
export interface CardStore {
  /**
   * Writes the card and its CVV together: either both exist afterwards or neither does. Resolves
   * only once the write is acknowledged (VAULT_WRITE_ACK); throws the entry's error otherwise.
   * A card with a fingerprint that is not provisional also becomes the one its fingerprint index
   * entry names if the entry is empty (for the card's TTL), so `dedupe` finds tokens made without
   * it. On one Redis the entry is set in the card's own transaction; in a Cluster (its slot is
   * elsewhere) it is best effort and not atomic with the card. Either way the entry may name a
   * token whose write failed or was not acknowledged, and `dedupe` checks the token it finds.
   */
  save(entry: CardEntryToSave): Promise<void>;
  /**
   * Saves several entries (a batch of TokenizeBatch) as few writes as the store can, and resolves
   * with one outcome per entry, in order: one entry's failure (its Cluster master is down, say)
   * is that entry's alone. A failed entry's token must not be handed out; its records may exist
   * and expire unseen. Does not reject on store failures; they are in the outcomes.
   */
  saveMany(entries: readonly CardEntryToSave[]): Promise<SaveOutcome[]>;
  getCard(token: string): Promise<StoredCard | null>;
  getCvv(token: string): Promise<StoredCvv | null>;
  /**
   * Reads and deletes the CVV in one step: a CVV is usable for exactly one Render, so two
   * concurrent Renders can never both get it (PCI DSS 3.3.1.2). In the same step the record's
   * replay id (`identify`) joins the token's set of used CVVs, kept for `rememberMs`; a record whose
   * id is already there (a copy restored after use) is deleted and answered `replayed`, never
   * returned. null when there is no CVV.
   */
  takeCvv(token: string, identify: (record: StoredCvv) => { id: string; rememberMs: number }): Promise<TakenCvv | null>;
  hasCvv(token: string): Promise<boolean>;
  /**
   * Retains a provisional token (or updates a card, cvvTtlMs 0), in one atomic step: replaces the card record with `next` and the
   * TTL `cardTtlMs` only if it still equals `expected`, and gives its CVV, if still there, the TTL
   * `cvvTtlMs` (0: leave the CVV alone). False when the card was changed, deleted or expired
   * meanwhile; the caller reads it again.
   */
  retainCard(token: string, expected: RawRecord, next: StoredCard, ttl: { cardTtlMs: number; cvvTtlMs: number }): Promise<boolean>;
  /**
   * Writes a freshly collected CVV for an existing token (replacing one not used yet), with its
   * TTL, acknowledged like save. The caller has checked the card; a card deleted meanwhile leaves a
   * CVV nobody can reach, gone within its TTL.
   */
  putCvv(token: string, record: StoredCvv, ttlMs: number): Promise<void>;
  /** Removes the card and its CVV; true when the card existed. */
  delete(token: string): Promise<boolean>;
  ping(): Promise<StoreHealth>;

  // Key rotation (`npm run vault -- rewrap`) works on the stored form so it can compare-and-set.
  /** One SCAN step over card records; cursor '0' starts, and a returned '0' means done. */
  scanTokens(cursor: string, count: number): Promise<{ cursor: string; tokens: string[] }>;
  readRaw(kind: RecordKind, token: string): Promise<RawRecord | null>;
  /**
   * Replaces a record only if it still equals `expected`, keeping its TTL; false when it was
   * changed, consumed or deleted meanwhile (the vault keeps serving while records are re-wrapped).
   */
  replaceRaw(kind: RecordKind, token: string, expected: RawRecord | string, next: RawRecord | string): Promise<boolean>;
  // The fingerprint key (wrapped under the key ring) and the fingerprint index that `dedupe` reads.
  /** The stored fingerprint key, or null before the first vault made one. */
  getFingerprintKey(): Promise<string | null>;
  /** Stores `stored` unless a key is already there (another replica was first); answers the one kept. */
  createFingerprintKey(stored: string): Promise<string>;
  /** Compare-and-set for rewrap; false when it changed meanwhile. */
  replaceFingerprintKey(expected: string, next: string): Promise<boolean>;
  /** The token the index names for a fingerprint, if any (it may be deleted or expired: check it). */
  findByFingerprint(fingerprint: string): Promise<string | null>;
  /**
   * Points the fingerprint at `token` (for `ttlMs`) if the index is empty or still names `replacing`
   * (a token found gone); answers the token the index names afterwards. Atomic: of two concurrent
   * claims of an empty entry, one wins and the other learns the winner. Acknowledged like save:
   * throws service_unavailable when it is not (the entry may still have been written).
   */
  claimFingerprint(fingerprint: string, token: string, replacing: string | null, ttlMs: number): Promise<string>;
  /** findByFingerprint for many at once (one round trip where the store can), in order. */
  findByFingerprints(fingerprints: readonly string[]): Promise<Array<string | null>>;
  /**
   * claimFingerprint for many at once (a batch of an import): each claim is atomic on its own, as
   * claimFingerprint's, and the holders are answered in order. Acknowledged as a whole (one WAIT
   * where the store can): throws service_unavailable when any is not (entries may have been written).
   */
  claimFingerprints(claims: readonly FingerprintClaim[]): Promise<string[]>;
  /** Removes the entry if it names `token` (the token was deleted). */
  releaseFingerprint(fingerprint: string, token: string): Promise<void>;
  // Aliases (domain/aliases.ts). The index names each alias by its keyed digest (aliasDigestOf), never
  // in clear: what is looked up may be a real card number. It is per merchant and mode; a token's own
  // list (format -> alias) lives beside its card.
  /** The token an alias digest names in the merchant's and mode's index, or null (it may be gone: check it). */
  findAlias(merchantId: string, mode: string, aliasDigest: string): Promise<string | null>;
  /**
   * Claims an alias (by digest) for `token` (for `ttlMs`) if no one holds it: atomic (SET NX), so of
   * two concurrent claims one wins. True when this call won. Acknowledged like save.
   */
  claimAlias(merchantId: string, mode: string, aliasDigest: string, token: string, ttlMs: number): Promise<boolean>;
  /** Removes index entries that still name `token` (its aliases are being given up or the token deleted). */
  releaseAliases(merchantId: string, mode: string, aliasDigests: readonly string[], token: string): Promise<void>;
  /** The token's aliases by format ({} when none). */
  aliasesOf(token: string): Promise<Record<string, string>>;
  /**
   * Adds an alias of a format the token has none of yet (HSETNX, kept for `ttlMs`); answers the
   * alias the token has for the format afterwards (another one when a concurrent call was first).
   */
  addTokenAlias(token: string, format: string, alias: string, ttlMs: number): Promise<string>;
  /** Gives the token's alias list and the index entries (still naming it) the card's new life `ttlMs`. */
  extendAliases(merchantId: string, mode: string, token: string, aliasDigests: readonly string[], ttlMs: number): Promise<void>;
  /** A small named value that survives restarts of the rewrap tool (its resume point). */
  getCheckpoint(name: string): Promise<string | null>;
  setCheckpoint(name: string, value: string | null): Promise<void>;
  close(): Promise<void>;
}
