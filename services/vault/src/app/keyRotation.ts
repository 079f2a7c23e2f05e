import { TesseraError, type KeyMode } from '@tessera/common';
import { decodeCardSecret, encodeCardSecret, type StoredCard } from '../domain/card';
import { NotCompactable } from '../domain/compactCard';
import {
  EnvelopeOpenError,
  isCurrent,
  isWrapped,
  openRecord,
  rebindRecord,
  rewrapRecord,
  sealRecord,
  type Envelope,
  type EnvelopeContext,
  type RecordKind,
} from '../domain/envelope';
import type { KeyRing } from '../domain/keyRing';
import { bindingOfCard, bindingOfCvv, cardBinding, cardMetadata } from '../domain/recordMetadata';
import { fingerprintKeyKekId, rewrapFingerprintKey } from '../domain/fingerprint';
import { caKeyKekId, rewrapCaKey } from '../domain/caKey';
import type { CaKeyStore } from '../store/caKeyStore';
import { modeOfLegacyCard } from '../domain/tokenMode';
import { isMerchantKekId, merchantKekRootKeyId, rewrapMerchantKek } from '../domain/merchantKeys';
import type { MerchantKeyRings, MerchantKekStore } from './merchantKeys';
import type { CardStore } from '../store/cardStore';
import { parseCard, parseCvv, serializeCard, serializeCvv, type RawRecord } from '../store/records';

/** Counts only: rotation output never names a token, a key or any card data. */
export interface RewrapStats {
  scanned: number;
  rewrapped: number;
  /**
   * Records moved to the current format: format 1 (sealed directly under a KEK) to envelope
   * encryption, and records written before tokens had a mode given theirs (bound into the AAD).
   */
  migrated: number;
  alreadyCurrent: number;
  /** Deleted, expired or consumed (CVV) while the tool ran: nothing left to re-wrap. */
  gone: number;
  /** Records that do not open (unknown key id or failed authentication). */
  failed: number;
  /** Records of a crypto-shredded merchant and mode: unreadable for good, left for the shred's sweep. */
  shredded: number;
  /** Merchant KEKs moved to the root ring's current key (each merchant and mode once per run). */
  merchantKeksRewrapped: number;
}

export interface RewrapCheckpoint {
  targetKeyId: string;
  /**
   * The run moves records onto merchant keys (issue 29). A checkpoint of a run that did not is not
   * resumed by one that does (the records before its cursor would stay on the root key), nor the reverse.
   */
  merchantKeys?: boolean;
  cursor: string;
  stats: RewrapStats;
}

export const REWRAP_CHECKPOINT = 'rewrap';
const MAX_ATTEMPTS = 5;

const emptyStats = (): RewrapStats => ({
  scanned: 0,
  rewrapped: 0,
  migrated: 0,
  alreadyCurrent: 0,
  gone: 0,
  failed: 0,
  shredded: 0,
  merchantKeksRewrapped: 0,
});

type Outcome = 'rewrapped' | 'migrated' | 'alreadyCurrent' | 'gone' | 'failed' | 'shredded';

function sealedOf(kind: RecordKind, raw: RawRecord): { sealed: Envelope; merchantId?: string } {
  if (kind === 'card') {
    const card = parseCard(raw);
    return { sealed: card.sealed, merchantId: card.merchantId };
  }
  return { sealed: parseCvv(raw).sealed };
}

type NextRecord = { next: RawRecord | string; outcome: 'migrated' | 'rewrapped' } | { outcome: 'alreadyCurrent' };

/**
 * The card re-wrapped. A card older than format 6 leaves in format 6 (issue 30), sealed afresh
 * with every clear field bound, its mode included; one that cannot take format 6 (see
 * NotCompactable) leaves in format 4 or 5 as before.
 */
function nextCard(ring: KeyRing, ctx: EnvelopeContext & { mode: KeyMode }, raw: RawRecord): NextRecord {
  const card = parseCard(raw);
  // What this very version of the record was sealed with: a provisional card with its deadline
  // (a retain may have re-sealed it without one since the token was scanned).
  const provisionalUntil = card.provisional === true ? card.expiresAt : undefined;
  const sealedWith: EnvelopeContext = { ...ctx, mode: card.mode ?? null, provisionalUntil, ...bindingOfCard(card) };
  if (card.compact !== true) {
    const migrated = migrateCard(ring, ctx, sealedWith, card);
    if (migrated !== undefined) return migrated;
  }
  // rewrapRecord authenticates the record before re-wrapping it.
  if (isCurrent(ring, card.sealed)) return { outcome: 'alreadyCurrent' };
  return { next: serializeCard({ ...card, sealed: rewrapRecord(ring, sealedWith, card.sealed) }), outcome: 'rewrapped' };
}

/**
 * A card older than format 6 sealed afresh as format 6; one that cannot take it (NotCompactable)
 * but is older than format 4 bound to all its clear fields; undefined for a format 4 or 5 card
 * that stays as it is (only re-wrapped).
 */
function migrateCard(
  ring: KeyRing,
  ctx: EnvelopeContext & { mode: KeyMode },
  sealedWith: EnvelopeContext,
  card: StoredCard,
): NextRecord | undefined {
  const { metadataBound: _bound, sealed: _sealed, ...clear } = card;
  const compact = { ...clear, mode: ctx.mode, compact: true as const };
  let binding: Pick<EnvelopeContext, 'metadata' | 'format'> | undefined;
  try {
    binding = cardBinding(compact);
  } catch (err) {
    if (!(err instanceof NotCompactable)) throw err;
  }
  if (binding !== undefined) {
    // Binding clear fields that were not authenticated until now (older than format 4):
    // tampering before this run is not detected (docs/adr/0010). Run rewrap soon after upgrading.
    const plaintext = openRecord(ring, sealedWith, card.sealed);
    let secret: Buffer | undefined;
    try {
      const decoded = decodeCardSecret(plaintext);
      if (decoded === undefined) throw new EnvelopeOpenError('malformed');
      secret = encodeCardSecret(decoded);
      const sealed = sealRecord(ring, { ...sealedWith, mode: ctx.mode, ...binding }, secret);
      return { next: serializeCard({ ...compact, metadataBound: true, sealed }), outcome: 'migrated' };
    } finally {
      plaintext.fill(0);
      secret?.fill(0);
    }
  }
  if (card.metadataBound !== true) {
    const metadata = cardMetadata({ ...card, mode: ctx.mode });
    const sealed = rebindRecord(ring, sealedWith, { ...sealedWith, mode: ctx.mode, metadata }, card.sealed);
    return { next: serializeCard({ ...card, mode: ctx.mode, metadataBound: true, sealed }), outcome: 'migrated' };
  }
  return undefined;
}

/**
 * The record re-wrapped. Older CVVs are only re-wrapped (given their mode if they had none): they
 * expire within CVV_TTL_SECONDS.
 */
function nextRecord(ring: KeyRing, ctx: EnvelopeContext & { mode: KeyMode }, raw: RawRecord): NextRecord {
  if (ctx.kind === 'card') return nextCard(ring, ctx, raw);
  const record = parseCvv(raw);
  if (record.mode === undefined) {
    const sealed = rebindRecord(ring, { ...ctx, mode: null }, ctx, record.sealed);
    return { next: serializeCvv({ ...record, mode: ctx.mode, sealed }), outcome: 'migrated' };
  }
  // As in the vault, a record with a mode is opened under its card's: rewrapRecord authenticates it.
  if (isCurrent(ring, record.sealed)) return { outcome: 'alreadyCurrent' };
  const sealed = rewrapRecord(ring, { ...ctx, ...bindingOfCvv(record) }, record.sealed);
  return { next: serializeCvv({ ...record, sealed }), outcome: isWrapped(record.sealed) ? 'rewrapped' : 'migrated' };
}

/**
 * Compare-and-set loop: the vault keeps serving (and may delete the record or consume the CVV)
 * while this runs, so a write only lands on the exact value that was re-wrapped.
 */
async function rewrapOne(
  store: CardStore,
  ring: KeyRing,
  kind: RecordKind,
  token: string,
  owner: { merchantId: string; mode: KeyMode },
): Promise<Outcome> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const raw = await store.readRaw(kind, token);
    if (raw === null) return 'gone';
    let next: RawRecord | string;
    let outcome: Outcome;
    try {
      const result = nextRecord(ring, { ...owner, token, kind }, raw);
      if (result.outcome === 'alreadyCurrent') return result.outcome;
      outcome = result.outcome;
      next = result.next;
    } catch (err) {
      // An HSM that cannot be reached stops the run (the checkpoint lets it resume); it says nothing about the record.
      if (err instanceof TesseraError && err.code === 'service_unavailable') throw err;
      if (err instanceof EnvelopeOpenError && err.reason === 'key_destroyed') return 'shredded';
      // Unreadable, unknown key or tampered: counted, never printed (the error could only name a token).
      return 'failed';
    }
    if (await store.replaceRaw(kind, token, raw, next)) return outcome;
  }
  throw new TesseraError('service_unavailable', { message: 'A record kept changing while it was being re-wrapped.' });
}

/** With merchant KEKs (issue 29): each record moves to its merchant and mode's KEK (made on first use). */
async function ringOfOwner(
  root: KeyRing,
  merchant: RewrapOptions['merchantKeys'],
  owner: { merchantId: string; mode: KeyMode },
): Promise<KeyRing> {
  return merchant === undefined ? root : merchant.rings.forSealing(owner.merchantId, owner.mode);
}

/**
 * Every stored merchant KEK moves to the root ring's current key, before any record: a root key
 * may be retired only once no merchant KEK is wrapped under it (`vault status`), including the
 * KEKs of merchants without records. Not checkpointed: there is one KEK per merchant and mode.
 */
async function rewrapMerchantKeks(store: MerchantKekStore, root: KeyRing, batchSize: number, stats: RewrapStats): Promise<void> {
  let cursor = '0';
  do {
    const step = await store.scanMerchantKeks(cursor, batchSize);
    for (const { merchantId, mode } of step.owners) {
      if (mode !== 'test' && mode !== 'live') continue;
      try {
        if (await rewrapMerchantKekIn(store, root, merchantId, mode)) stats.merchantKeksRewrapped++;
      } catch (err) {
        if (err instanceof TesseraError && err.code === 'service_unavailable') throw err;
        stats.failed++;
      }
    }
    cursor = step.cursor;
  } while (cursor !== '0');
}

/** True when the stored KEK was re-wrapped; compare-and-set like the records. */
async function rewrapMerchantKekIn(store: MerchantKekStore, root: KeyRing, merchantId: string, mode: KeyMode): Promise<boolean> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const { stored } = await store.getMerchantKek(merchantId, mode);
    if (stored === null) return false;
    const next = rewrapMerchantKek(root, merchantId, mode, stored);
    if (next === null) return false;
    if (await store.replaceMerchantKek(merchantId, mode, stored, next)) return true;
  }
  throw new TesseraError('service_unavailable', { message: 'A merchant key kept changing while it was being re-wrapped.' });
}

async function rewrapToken(
  store: CardStore,
  root: KeyRing,
  token: string,
  stats: RewrapStats,
  merchant: RewrapOptions['merchantKeys'],
): Promise<void> {
  const raw = await store.readRaw('card', token);
  stats.scanned++;
  if (raw === null) {
    stats.gone++;
    return;
  }
  let owner: { merchantId: string; mode: KeyMode };
  try {
    const card = parseCard(raw);
    owner = { merchantId: card.merchantId, mode: card.mode ?? legacyModeOf(root, token, card) };
  } catch {
    stats.failed++;
    return;
  }
  const ring = await ringOfOwner(root, merchant, owner);
  // The card first: once it carries its mode, the vault reads the CVV by its own marker either way.
  for (const kind of ['card', 'cvv'] as const) {
    const outcome = await rewrapOne(store, ring, kind, token, owner);
    // A token without a CVV is not "gone": count the card's outcome, and the CVV's only when it exists.
    if (kind === 'cvv' && outcome === 'gone') continue;
    stats[outcome]++;
  }
}

/** The mode of a card written before tokens had one, from the card itself (see tokenMode.ts). */
export function legacyModeOf(ring: KeyRing, token: string, card: StoredCard): KeyMode {
  const plaintext = openRecord(ring, { merchantId: card.merchantId, token, kind: 'card', mode: null }, card.sealed);
  try {
    const secret = decodeCardSecret(plaintext);
    if (secret === undefined) throw new Error('a card record without a number');
    return modeOfLegacyCard(secret.number);
  } finally {
    plaintext.fill(0);
  }
}

export interface RewrapOptions {
  batchSize: number;
  /** Ignore a saved checkpoint and scan from the beginning. */
  restart?: boolean;
  /** Stop after this many SCAN steps (the checkpoint stays, so a later run resumes). */
  maxBatches?: number;
  onProgress?: (checkpoint: RewrapCheckpoint) => void;
  /** Move records to their merchant's KEK (and merchant KEKs to the current root key); absent: root keys only. */
  merchantKeys?: { rings: MerchantKeyRings; store: MerchantKekStore };
}

/**
 * Re-wraps every record's data key under the ring's current KEK, online. After each SCAN step the
 * cursor and counts are saved, so an interrupted run resumes where it stopped; a checkpoint made
 * for another target key is ignored. Returns done=false when maxBatches stopped it early.
 */
export async function rewrapAll(
  store: CardStore,
  ring: KeyRing,
  opts: RewrapOptions,
): Promise<{ done: boolean; checkpoint: RewrapCheckpoint; fingerprintKey: FingerprintKeyOutcome }> {
  // First, so that even a run stopped early leaves the one key every fingerprint depends on movable.
  const fingerprintKey = await rewrapFingerprintKeyIn(store, ring);
  const withMerchantKeys = opts.merchantKeys !== undefined;
  let checkpoint: RewrapCheckpoint = {
    targetKeyId: ring.currentKeyId,
    ...(withMerchantKeys ? { merchantKeys: true } : {}),
    cursor: '0',
    stats: emptyStats(),
  };
  if (!opts.restart) {
    const saved = await store.getCheckpoint(REWRAP_CHECKPOINT);
    const parsed = saved === null ? undefined : parseCheckpoint(saved);
    if (parsed !== undefined && parsed.targetKeyId === ring.currentKeyId && (parsed.merchantKeys === true) === withMerchantKeys) {
      checkpoint = parsed;
    }
  }
  let batches = 0;
  const merchant = opts.merchantKeys;
  if (merchant !== undefined) await rewrapMerchantKeks(merchant.store, ring, opts.batchSize, checkpoint.stats);
  do {
    if (opts.maxBatches !== undefined && batches >= opts.maxBatches) return { done: false, checkpoint, fingerprintKey };
    const step = await store.scanTokens(checkpoint.cursor, opts.batchSize);
    for (const token of step.tokens) await rewrapToken(store, ring, token, checkpoint.stats, merchant);
    checkpoint = { ...checkpoint, cursor: step.cursor };
    batches++;
    if (checkpoint.cursor !== '0') await store.setCheckpoint(REWRAP_CHECKPOINT, JSON.stringify(checkpoint));
    opts.onProgress?.(checkpoint);
  } while (checkpoint.cursor !== '0');
  await store.setCheckpoint(REWRAP_CHECKPOINT, null);
  return { done: true, checkpoint, fingerprintKey };
}

/** What rewrap did to the fingerprint key: none yet (absent), or it does not open (failed). */
export type FingerprintKeyOutcome = 'rewrapped' | 'alreadyCurrent' | 'absent' | 'failed';

/**
 * The fingerprint key (domain/fingerprint.ts) is wrapped under a KEK like a data key, so it moves
 * with the records: a KEK may be retired only once this key is off it too (`vault status`).
 */
async function rewrapFingerprintKeyIn(store: CardStore, ring: KeyRing): Promise<FingerprintKeyOutcome> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await store.getFingerprintKey();
    if (stored === null) return 'absent';
    let next: string | null;
    try {
      next = rewrapFingerprintKey(ring, stored);
    } catch (err) {
      if (err instanceof TesseraError && err.code === 'service_unavailable') throw err;
      return 'failed';
    }
    if (next === null) return 'alreadyCurrent';
    if (await store.replaceFingerprintKey(stored, next)) return 'rewrapped';
  }
  throw new TesseraError('service_unavailable', { message: 'The fingerprint key kept changing while it was being re-wrapped.' });
}

function parseCheckpoint(text: string): RewrapCheckpoint | undefined {
  try {
    const value = JSON.parse(text) as Partial<RewrapCheckpoint>;
    if (
      typeof value.targetKeyId === 'string' &&
      typeof value.cursor === 'string' &&
      typeof value.stats === 'object' &&
      value.stats !== null
    ) {
      return {
        targetKeyId: value.targetKeyId,
        ...(value.merchantKeys === true ? { merchantKeys: true } : {}),
        cursor: value.cursor,
        stats: { ...emptyStats(), ...value.stats },
      };
    }
  } catch {
    // a damaged checkpoint only means starting over
  }
  return undefined;
}

export interface KeyUsage {
  /** Records per root KEK id, card and CVV records counted separately. */
  byKeyId: Record<string, { card: number; cvv: number; format1: number }>;
  /** Records under merchant KEKs (issue 29), all merchants together. */
  underMerchantKeys: { card: number; cvv: number };
  /** Stored merchant KEKs per root key id that wraps them ('unreadable' for a damaged one). */
  merchantKeksByKeyId: Record<string, number>;
  unreadable: number;
  /** The KEK id the fingerprint key is wrapped under; null before any vault made one. */
  fingerprintKeyKekId: string | null;
}

/** How many records each KEK protects: a key may be retired once its count is zero. */
export async function countRecordsByKeyId(store: CardStore, batchSize: number, keks?: MerchantKekStore): Promise<KeyUsage> {
  const storedFingerprintKey = await store.getFingerprintKey();
  let fingerprintKekId: string | null = null;
  try {
    fingerprintKekId = storedFingerprintKey === null ? null : fingerprintKeyKekId(storedFingerprintKey);
  } catch {
    fingerprintKekId = null;
  }
  const usage: KeyUsage = {
    byKeyId: {},
    underMerchantKeys: { card: 0, cvv: 0 },
    merchantKeksByKeyId: {},
    unreadable: 0,
    fingerprintKeyKekId: fingerprintKekId,
  };
  if (keks !== undefined) await countMerchantKeks(keks, batchSize, usage.merchantKeksByKeyId);
  let cursor = '0';
  do {
    const step = await store.scanTokens(cursor, batchSize);
    for (const token of step.tokens) {
      for (const kind of ['card', 'cvv'] as const) {
        const raw = await store.readRaw(kind, token);
        if (raw === null) continue;
        try {
          const { sealed } = sealedOf(kind, raw);
          if (isMerchantKekId(sealed.keyId)) {
            usage.underMerchantKeys[kind]++;
            continue;
          }
          const entry = (usage.byKeyId[sealed.keyId] ??= { card: 0, cvv: 0, format1: 0 });
          entry[kind]++;
          if (!isWrapped(sealed)) entry.format1++;
        } catch {
          usage.unreadable++;
        }
      }
    }
    cursor = step.cursor;
  } while (cursor !== '0');
  return usage;
}

async function countMerchantKeks(keks: MerchantKekStore, batchSize: number, counts: Record<string, number>): Promise<void> {
  let cursor = '0';
  do {
    const step = await keks.scanMerchantKeks(cursor, batchSize);
    for (const { merchantId, mode } of step.owners) {
      const { stored } = await keks.getMerchantKek(merchantId, mode);
      if (stored === null) continue;
      let rootKeyId: string;
      try {
        rootKeyId = merchantKekRootKeyId(stored);
      } catch {
        rootKeyId = 'unreadable';
      }
      counts[rootKeyId] = (counts[rootKeyId] ?? 0) + 1;
    }
    cursor = step.cursor;
  } while (cursor !== '0');
}

/** What rewrap did to the merchants' forward-proxy CAs (domain/caKey.ts): counts only, never a merchant. */
export interface CaKeyRewrapStats {
  rewrapped: number;
  alreadyCurrent: number;
  /** Do not open (unknown key id, failed authentication): left as they are, and the run fails. */
  failed: number;
}

/**
 * The forward-proxy CAs' private keys are sealed under a KEK like a record's data key, so they move
 * with the records: one per merchant, all re-wrapped in one pass (compare-and-set, as records).
 */
export async function rewrapCaKeys(cas: CaKeyStore, ring: KeyRing): Promise<CaKeyRewrapStats> {
  const stats: CaKeyRewrapStats = { rewrapped: 0, alreadyCurrent: 0, failed: 0 };
  for (const merchantId of await cas.merchants()) stats[await rewrapCaKeyOf(cas, ring, merchantId)]++;
  return stats;
}

async function rewrapCaKeyOf(cas: CaKeyStore, ring: KeyRing, merchantId: string): Promise<keyof CaKeyRewrapStats> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await cas.get(merchantId);
    if (stored === null) return 'alreadyCurrent';
    let next: string | null;
    try {
      next = rewrapCaKey(ring, merchantId, stored);
    } catch (err) {
      if (err instanceof TesseraError && err.code === 'service_unavailable') throw err;
      return 'failed';
    }
    if (next === null) return 'alreadyCurrent';
    if (await cas.replace(merchantId, stored, next)) return 'rewrapped';
  }
  throw new TesseraError('service_unavailable', { message: 'A CA kept changing while it was being re-wrapped.' });
}

/** How many forward-proxy CAs each KEK wraps (`vault status`): a KEK may be retired once it wraps none. */
export async function countCaKeysByKekId(cas: CaKeyStore): Promise<{ byKeyId: Record<string, number>; unreadable: number }> {
  const usage = { byKeyId: {} as Record<string, number>, unreadable: 0 };
  for (const merchantId of await cas.merchants()) {
    const stored = await cas.get(merchantId);
    if (stored === null) continue;
    try {
      const kek = caKeyKekId(stored);
      usage.byKeyId[kek] = (usage.byKeyId[kek] ?? 0) + 1;
    } catch {
      usage.unreadable++;
    }
  }
  return usage;
}
