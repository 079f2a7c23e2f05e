import { secureRandomBytes, TesseraError, validateCvv, type KeyMode } from '@tessera/common';
import {
  checkCardChange,
  checkCardToTokenize,
  describeCardFields,
  isPastProvisionalDeadline,
  provisionalRetention,
  provisionalTtlSecondsOf,
  retentionFor,
  retentionOnRetain,
  toTokenRecordView,
  type CardSecret,
  decodeCardSecret,
  encodeCardSecret,
  type CardToTokenize,
  type StoredCard,
  type StoredCvv,
  type TokenOwner,
  type TokenRecordView,
} from '../domain/card';
import {
  authenticateRecord,
  EnvelopeOpenError,
  openRecord,
  rebindRecord,
  sealRecord,
  type EnvelopeContext,
  type Envelope,
  type RecordKind,
} from '../domain/envelope';
import { aliasDigestOf, fingerprintOf, newFingerprintKey, openFingerprintKey } from '../domain/fingerprint';
import { bindingOfCard, bindingOfCvv, cardBinding, cvvBinding, cvvReplayId } from '../domain/recordMetadata';
import type { KeyRing } from '../domain/keyRing';
import type { MerchantKeyRings } from './merchantKeys';
import { checkRenderable, DEFAULT_RENDER_MAX_BYTES, renderPspBody, templateUses, type CardValues } from '../domain/renderPspBody';
import { previewPspBody, type PspBodyPreview } from '../domain/previewPspBody';
import { generateToken, isTokenShaped } from '../domain/token';
import { drawAlias, isAliasFormat, isAliasShaped, type AliasFormat } from '../domain/aliases';
import { keyModeOf, modeOfLegacyCard } from '../domain/tokenMode';
import type { CardEntryToSave, CardStore, StoreHealth } from '../store/cardStore';
import { parseCard } from '../store/records';

export interface VaultOptions {
  store: CardStore;
  keyRing: KeyRing;
  /**
   * Per-merchant KEKs (issue 29): when given, each merchant and mode's data keys are wrapped under
   * its own KEK (made on first use) instead of the root ring's current key; records still under a
   * root key open until rewrap moves them.
   */
  merchantKeys?: MerchantKeyRings;
  cvvTtlSeconds: number;
  cardGraceDays: number;
  /** The most bytes a rendered body may have (RENDER_MAX_BYTES); DEFAULT_RENDER_MAX_BYTES when not given. */
  renderMaxBytes?: number;
  /** BROWSER_TOKEN_TTL_SECONDS: how long a provisional token lives unless retained; default 3600. */
  browserTokenTtlSeconds?: number;
  now?: () => Date;
  /** Told of every record that looks tampered with or restored (logged and counted in main.ts). */
  onAlarm?: (alarm: RecordAlarm) => void;
}

/**
 * Signs of an insider at the store (finding 5 of issue 11), never of a caller's mistake:
 * - authentication_failed: a record's clear fields or ciphertext are not what it was sealed with;
 * - cvv_replayed: a CVV that was already consumed is back (a copy restored after use);
 * - cvv_expired: a CVV past its sealed deadline is back (a copy restored after it expired).
 * Carries the token (not card data) so an operator can find the record.
 */
export interface RecordAlarm {
  alarm: 'authentication_failed' | 'cvv_replayed' | 'cvv_expired';
  record: RecordKind;
  token: string;
}

/** 128 random bits: a CVV's nonce only has to be unique among that token's CVVs. */
const CVV_NONCE_BYTES = 16;
/**
 * How much longer than a CVV's own life its used mark is kept: vault replicas judge the sealed
 * deadline by their own clocks, so a mark must outlive the deadline by more than they can drift.
 */
const CVV_MARK_MARGIN_MS = 10 * 60 * 1000;

/** Stands in for the CVV when a body is checked before the CVV is taken: the longest CVV (Amex) bounds the size. */
export const LONGEST_CVV = '0000';

const DEFAULT_BROWSER_TOKEN_TTL_SECONDS = 3600;
/**
 * A dedupe create that loses the fingerprint index to a concurrent create of the same card answers
 * the winner instead; the winner can itself be deleted meanwhile, so the create runs again this often.
 */
const DEDUPE_ATTEMPTS = 5;

/**
 * Draws of a new alias that may collide with one the merchant already holds before the format is
 * given up: a card_bin_last4 alias of a 16-digit card has 10^5 values per BIN and last 4, so only a
 * merchant and mode holding most of them for one card (a test card tokenized without dedupe, over
 * and over) runs out.
 */
const ALIAS_ATTEMPTS = 16;

/** The requested alias formats, distinct and known; parameter_invalid otherwise (never echoing them). */
function checkedAliasFormats(card: CardToTokenize): AliasFormat[] {
  const formats = card.aliasFormats ?? [];
  const known = formats.filter(isAliasFormat);
  if (known.length !== formats.length) {
    throw new TesseraError('parameter_invalid', {
      param: 'aliasFormats',
      message: 'aliasFormats may hold only "card_bin_last4", "card_last4" and "uuid".',
    });
  }
  if (new Set(known).size !== known.length) {
    throw new TesseraError('parameter_invalid', { param: 'aliasFormats', message: 'aliasFormats names a format twice.' });
  }
  if (known.length > 0 && card.provisional === true) {
    throw new TesseraError('parameter_invalid', { param: 'aliasFormats', message: 'Browser-made tokens have no aliases.' });
  }
  return known;
}

/**
 * A card opened for a render: its values (card data: never log them) and its CVV, which
 * `takeCvv` consumes (once: a second call finds none) under Render's rules.
 */
export interface RenderableCard {
  token: string;
  values: Omit<CardValues, 'cvv'>;
  hasCvv(): Promise<boolean>;
  /** undefined when there is none, or the one stored must not be used (see takeCvv below). */
  takeCvv(): Promise<string | undefined>;
}

/** What PATCH /v1/token/{token} (and a dedupe create) may change of a stored card; absent: kept. */
export interface CardChange {
  expiryMonth?: number | undefined;
  expiryYear?: number | undefined;
  holderName?: string | undefined;
}
/** Retain is a compare-and-set; a card that keeps changing under it (key rotation) is read again this often. */
const RETAIN_ATTEMPTS = 5;

/** The vault's use cases: domain rules and crypto around the card store. Transport-agnostic. */
export class Vault {
  private readonly store: CardStore;
  private readonly keyRing: KeyRing;
  private readonly now: () => Date;
  private fingerprintKeyLoad: Promise<Buffer> | undefined;

  constructor(private readonly opts: VaultOptions) {
    this.store = opts.store;
    this.keyRing = opts.keyRing;
    this.now = opts.now ?? (() => new Date());
  }

  async tokenize(card: CardToTokenize): Promise<TokenRecordView> {
    await this.refuseAlias(card);
    return this.tokenizeCard(card);
  }

  /** tokenize, once the number is known not to be one of the merchant's aliases. */
  private async tokenizeCard(card: CardToTokenize): Promise<TokenRecordView> {
    const formats = checkedAliasFormats(card);
    if (card.dedupe === true && card.provisional !== true) return this.tokenizeDeduplicated(card, formats);
    const ring = await this.sealingRingFor(card);
    const { entry, view } = this.prepareToken(card, await this.fingerprintKey(), ring);
    return this.saveWithAliases(card, entry, view, formats);
  }

  /**
   * A number that is a live alias of this merchant and mode is not a card (it may even be someone
   * else's real card number by chance): refused before any other check of the card, so a test key
   * learns number_is_alias too rather than live_card_in_test_mode. The index, not the digits, tells.
   */
  private async refuseAlias(card: CardToTokenize): Promise<void> {
    const mode = keyModeOf(card.mode);
    if (mode === undefined || card.merchantId === '' || !isAliasShaped(card.number)) return;
    const named = await this.store.findAlias(card.merchantId, mode, await this.aliasDigest(card.merchantId, mode, card.number));
    if (named !== null && (await this.store.getCard(named)) !== null) throw new TesseraError('number_is_alias', { param: 'number' });
  }

  /** The aliases are claimed before the card is written (so a token is never answered without them) and given up if it is not. */
  private async saveWithAliases(
    card: CardToTokenize,
    entry: CardEntryToSave,
    view: TokenRecordView,
    formats: readonly AliasFormat[],
  ): Promise<TokenRecordView> {
    const mode = checkCardToTokenize(card);
    const aliases = await this.claimAliases(card.merchantId, mode, entry.token, card.number, formats, entry.cardTtlMs);
    try {
      await this.store.save({ ...entry, aliases });
    } catch (err) {
      await this.releaseAliases(card.merchantId, mode, Object.values(aliases), entry.token).catch(() => undefined);
      throw err;
    }
    return { ...view, aliases };
  }

  /** One alias per format, each claimed in the index for `token`; on any failure the ones claimed are given up. */
  private async claimAliases(
    merchantId: string,
    mode: KeyMode,
    token: string,
    number: string,
    formats: readonly AliasFormat[],
    ttlMs: number,
  ): Promise<Record<string, string>> {
    const claimed: Record<string, string> = {};
    try {
      for (const format of formats) claimed[format] = await this.claimAlias(merchantId, mode, token, number, format, ttlMs);
    } catch (err) {
      await this.releaseAliases(merchantId, mode, Object.values(claimed), token).catch(() => undefined);
      throw err;
    }
    return claimed;
  }

  private async claimAlias(
    merchantId: string,
    mode: KeyMode,
    token: string,
    number: string,
    format: AliasFormat,
    ttlMs: number,
  ): Promise<string> {
    for (let attempt = 0; attempt < ALIAS_ATTEMPTS; attempt++) {
      const alias = drawAlias(format, number);
      if (await this.store.claimAlias(merchantId, mode, await this.aliasDigest(merchantId, mode, alias), token, ttlMs)) return alias;
    }
    throw new TesseraError('service_unavailable', {
      message: `No free ${format} alias was found for this card: its merchant and mode hold nearly all of them. Ask another format.`,
    });
  }

  private async aliasDigest(merchantId: string, mode: KeyMode, alias: string): Promise<string> {
    return aliasDigestOf(await this.fingerprintKey(), merchantId, mode, alias);
  }

  private async releaseAliases(merchantId: string, mode: KeyMode, aliases: readonly string[], token: string): Promise<void> {
    if (aliases.length === 0) return;
    const key = await this.fingerprintKey();
    const digests = aliases.map((alias) => aliasDigestOf(key, merchantId, mode, alias));
    await this.store.releaseAliases(merchantId, mode, digests, token);
  }

  /** The token's aliases live as long as the card they name (its TTL changes with a new expiry). */
  private async extendAliases(merchantId: string, mode: KeyMode, token: string, ttlMs: number): Promise<void> {
    const aliases = Object.values(await this.store.aliasesOf(token));
    if (aliases.length === 0) return;
    const key = await this.fingerprintKey();
    const digests = aliases.map((alias) => aliasDigestOf(key, merchantId, mode, alias));
    await this.store.extendAliases(merchantId, mode, token, digests, ttlMs);
  }

  /** The formats the token lacks get a new alias each; a format it has keeps its alias (one per format per token). */
  private async addMissingAliases(
    owner: { merchantId: string; mode: KeyMode },
    token: string,
    card: StoredCard,
    number: string,
    formats: readonly AliasFormat[],
  ): Promise<Record<string, string>> {
    const aliases = await this.store.aliasesOf(token);
    const ttlMs = Math.max(1000, Date.parse(card.expiresAt) - this.now().getTime());
    for (const format of formats) {
      if (aliases[format] !== undefined) continue;
      const alias = await this.claimAlias(owner.merchantId, owner.mode, token, number, format, ttlMs);
      const kept = await this.store.addTokenAlias(token, format, alias, ttlMs);
      // A concurrent dedupe of the same card gave the format first: its alias is the token's.
      if (kept !== alias) await this.releaseAliases(owner.merchantId, owner.mode, [alias], token).catch(() => undefined);
      aliases[format] = kept;
    }
    return aliases;
  }

  /**
   * `dedupe`: the merchant's existing token for this card (same mode, found through the fingerprint
   * index), updated with this card's expiry, holder name and CVV; or a new token that claims the
   * index. Every create fills an empty index entry as part of its store write (a plain create
   * never reads it: no extra round trip); only dedupe creates check the token it names and replace
   * it when gone. Two concurrent creates of the same card both write a token, but only one claims
   * the index: the other deletes its own (never handed out) and answers the winner, so both
   * callers get one token.
   */
  private async tokenizeDeduplicated(card: CardToTokenize, formats: readonly AliasFormat[]): Promise<TokenRecordView> {
    const mode = checkCardToTokenize(card);
    const key = await this.fingerprintKey();
    const fingerprint = fingerprintOf(key, card.merchantId, mode, card.number);
    const ring = await this.sealingRing(card.merchantId, mode);
    for (let attempt = 0; attempt < DEDUPE_ATTEMPTS; attempt++) {
      const existing = await this.store.findByFingerprint(fingerprint);
      if (existing !== null) {
        const refreshed = await this.refreshDuplicate(card, mode, existing, formats);
        if (refreshed !== undefined) return refreshed;
      }
      // No entry, or it names a token that is gone (deleted, expired, provisional): a new one.
      const { entry, view: fresh } = this.prepareToken(card, key, ring);
      const view = await this.saveWithAliases(card, entry, fresh, formats);
      const giveUpAliases = (): Promise<void> =>
        this.releaseAliases(card.merchantId, mode, Object.values(view.aliases), entry.token).catch(() => undefined);
      const holder = await this.store.claimFingerprint(fingerprint, entry.token, existing, entry.cardTtlMs).catch(async (err: unknown) => {
        // A claim not acknowledged fails the token as an unacknowledged card write does: the
        // token is never handed out, and its entry (if it landed) and card go again, so a
        // failover to a lagging replica cannot leave this card with a second live token.
        await Promise.all(
          [this.store.releaseFingerprint(fingerprint, entry.token), this.store.delete(entry.token), giveUpAliases()].map((p) =>
            p.catch(() => undefined),
          ),
        );
        throw err;
      });
      if (holder === entry.token) return view;
      await this.store.delete(entry.token);
      await giveUpAliases();
    }
    throw new TesseraError('service_unavailable', { message: 'The card kept changing while it was being deduplicated.' });
  }

  /** The existing token updated with the new card's details, or undefined when it cannot be used. */
  private async refreshDuplicate(
    card: CardToTokenize,
    mode: KeyMode,
    token: string,
    formats: readonly AliasFormat[],
  ): Promise<TokenRecordView | undefined> {
    const owner = { merchantId: card.merchantId, mode };
    const change = { expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, holderName: card.holderName || undefined };
    try {
      const { card: stored } = await this.rewriteCard(owner, token, change, card.number);
      if (card.cvv !== '') await this.storeCvv(stored, token, mode, card.cvv);
      const aliases = await this.addMissingAliases(owner, token, stored, card.number, formats);
      return toTokenRecordView(token, stored, card.cvv !== '' || (await this.store.hasCvv(token)), true, aliases);
    } catch (err) {
      if (err instanceof TesseraError && err.code === 'token_not_found') return undefined;
      throw err;
    }
  }

  /**
   * The fingerprint key, loaded once: read from the store and unwrapped with the key ring, or (on
   * the first vault ever) made, wrapped and stored; when two replicas race, both use the stored one.
   * A failure is not remembered, so the next call tries again (the store may be back).
   */
  private fingerprintKey(): Promise<Buffer> {
    this.fingerprintKeyLoad ??= this.loadFingerprintKey().catch((err: unknown) => {
      this.fingerprintKeyLoad = undefined;
      throw err;
    });
    return this.fingerprintKeyLoad;
  }

  private async loadFingerprintKey(): Promise<Buffer> {
    let stored = await this.store.getFingerprintKey();
    if (stored === null) {
      const made = newFingerprintKey(this.keyRing);
      stored = await this.store.createFingerprintKey(made.stored);
      made.key.fill(0);
    }
    try {
      return openFingerprintKey(this.keyRing, stored);
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      throw new TesseraError('internal_error', {
        message: 'The fingerprint key cannot be opened with the configured keys.',
        cause: err,
      });
    }
  }

  /**
   * TokenizeBatch: every card is checked on its own (an invalid one is refused, the others go
   * on), and the valid ones are written together. Each item's outcome is its own: a card whose
   * write failed (its Cluster master is down, say) answers that error, and its token, never
   * acknowledged, is not handed out; the others still get theirs.
   */
  async tokenizeBatch(cards: readonly CardToTokenize[]): Promise<Array<TokenRecordView | TesseraError>> {
    const outcomes: Array<TokenRecordView | TesseraError> = [];
    const toSave: Array<{ entry: CardEntryToSave; item: number }> = [];
    const deduplicated: Array<Promise<void>> = [];
    let key: Buffer;
    try {
      key = await this.fingerprintKey();
    } catch (err) {
      const error = err instanceof TesseraError ? err : new TesseraError('service_unavailable', { cause: err });
      return cards.map(() => error);
    }
    // Every number is looked up in its merchant's alias index first, all at once (one round trip with
    // auto-pipelining); a refused one takes no further part.
    const aliasChecks = await Promise.all(
      cards.map((card) =>
        this.refuseAlias(card).then(
          () => undefined,
          (err: unknown) => (err instanceof TesseraError ? err : new TesseraError('service_unavailable', { cause: err })),
        ),
      ),
    );
    for (const [index, card] of cards.entries()) {
      const refused = aliasChecks[index];
      if (refused !== undefined) {
        outcomes.push(refused);
        continue;
      }
      if ((card.dedupe === true && card.provisional !== true) || (card.aliasFormats ?? []).length > 0) {
        // Each reads and claims the fingerprint index or the alias index: they cannot join the batch's one write.
        const item = outcomes.length;
        outcomes.push(new TesseraError('internal_error'));
        deduplicated.push(
          this.tokenizeCard(card).then(
            (view) => void (outcomes[item] = view),
            (err: unknown) =>
              void (outcomes[item] = err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err })),
          ),
        );
        continue;
      }
      try {
        const { entry, view } = this.prepareToken(card, key, await this.sealingRingFor(card));
        toSave.push({ entry, item: outcomes.length });
        outcomes.push(view);
      } catch (err) {
        outcomes.push(err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err }));
      }
    }
    const saved = await this.store.saveMany(toSave.map(({ entry }) => entry)).catch((err: unknown) => {
      const error = err instanceof TesseraError ? err : new TesseraError('service_unavailable', { cause: err });
      return toSave.map(() => ({ saved: false as const, error }));
    });
    toSave.forEach(({ item }, i) => {
      const result = saved[i];
      if (result === undefined)
        outcomes[item] = new TesseraError('internal_error', { message: 'The card store gave no outcome for a card.' });
      else if (!result.saved) outcomes[item] = result.error;
    });
    await Promise.all(deduplicated);
    return outcomes;
  }

  /**
   * The import's tokenize (docs/adr/0015-card-import.md): each card as `tokenize` with `dedupe`
   * would (same checks, same records, same fingerprint protocol: find, write with the index entry,
   * claim), but the batch's lookups, card writes and claims go out together: one round trip and
   * one acknowledgement each per batch instead of per card. Every claim stays atomic on its own, so
   * a concurrent POST /v1/token with dedupe of the same card still ends with one token. The rare
   * cards that cannot join (a card seen earlier in the batch, a lost claim, a token found gone
   * twice, aliases asked) take `tokenize`'s own path afterwards, in the batch's order, where they
   * find the token the batch made. Each outcome is the card's own.
   */
  async tokenizeDeduplicatedMany(cards: readonly CardToTokenize[]): Promise<Array<TokenRecordView | TesseraError>> {
    const outcomes: Array<TokenRecordView | TesseraError | undefined> = cards.map(() => undefined);
    const asError = (err: unknown): TesseraError =>
      err instanceof TesseraError ? err : new TesseraError('service_unavailable', { cause: err });
    let key: Buffer;
    try {
      key = await this.fingerprintKey();
    } catch (err) {
      const error = asError(err);
      return cards.map(() => error);
    }
    await Promise.all(cards.map((card, i) => this.refuseAlias(card).catch((err: unknown) => void (outcomes[i] = asError(err)))));

    interface Item {
      index: number;
      card: CardToTokenize;
      mode: KeyMode;
      fingerprint: string;
    }
    const firsts = new Map<string, Item>();
    // Cards for tokenize's own path, grouped so that the same card's go one after the other.
    const later = new Map<string, number[]>();
    const defer = (group: string, index: number): void => {
      const queued = later.get(group);
      if (queued === undefined) later.set(group, [index]);
      else queued.push(index);
    };
    for (const [index, card] of cards.entries()) {
      if (outcomes[index] !== undefined) continue;
      try {
        const formats = checkedAliasFormats(card);
        const mode = checkCardToTokenize(card);
        const fingerprint = fingerprintOf(key, card.merchantId, mode, card.number);
        if (card.dedupe !== true || card.provisional === true || formats.length > 0) defer(`#${index}`, index);
        else if (firsts.has(fingerprint) || later.has(fingerprint)) defer(fingerprint, index);
        else firsts.set(fingerprint, { index, card, mode, fingerprint });
      } catch (err) {
        outcomes[index] = asError(err);
      }
    }

    const items = [...firsts.values()];
    let found: Array<string | null>;
    try {
      found = await this.store.findByFingerprints(items.map((item) => item.fingerprint));
    } catch (err) {
      const error = asError(err);
      for (const item of items) outcomes[item.index] = error;
      found = [];
      items.length = 0;
    }
    // A token found is refreshed as tokenize refreshes it; one found gone is replaced by a new token.
    const fresh: Array<Item & { replacing: string | null }> = [];
    await Promise.all(
      items.map(async (item, i) => {
        const existing = found[i] ?? null;
        if (existing !== null) {
          try {
            const refreshed = await this.refreshDuplicate(item.card, item.mode, existing, []);
            if (refreshed !== undefined) {
              outcomes[item.index] = refreshed;
              return;
            }
          } catch (err) {
            outcomes[item.index] = asError(err);
            return;
          }
        }
        fresh.push({ ...item, replacing: existing });
      }),
    );
    fresh.sort((a, b) => a.index - b.index);

    const prepared: Array<{ item: Item & { replacing: string | null }; entry: CardEntryToSave; view: TokenRecordView }> = [];
    for (const item of fresh) {
      try {
        const ring = await this.sealingRing(item.card.merchantId, item.mode);
        prepared.push({ item, ...this.prepareToken(item.card, key, ring, item.fingerprint) });
      } catch (err) {
        outcomes[item.index] = asError(err);
      }
    }
    const saved = await this.store.saveMany(prepared.map(({ entry }) => entry)).catch((err: unknown) => {
      const error = asError(err);
      return prepared.map(() => ({ saved: false as const, error }));
    });
    const written = prepared.filter(({ item }, i) => {
      const outcome = saved[i];
      if (outcome?.saved === true) return true;
      outcomes[item.index] = outcome === undefined ? new TesseraError('internal_error') : outcome.error;
      return false;
    });
    let holders: string[] | undefined;
    try {
      holders = await this.store.claimFingerprints(
        written.map(({ item, entry }) => ({
          fingerprint: item.fingerprint,
          token: entry.token,
          replacing: item.replacing,
          ttlMs: entry.cardTtlMs,
        })),
      );
    } catch (err) {
      // As in tokenize: claims not acknowledged fail their tokens, which are never handed out, and
      // their entries (if they landed) and cards go again.
      const error = asError(err);
      await Promise.all(
        written.flatMap(({ item, entry }) => {
          outcomes[item.index] = error;
          return [this.store.releaseFingerprint(item.fingerprint, entry.token), this.store.delete(entry.token)].map((p) =>
            p.catch(() => undefined),
          );
        }),
      );
    }
    if (holders !== undefined) {
      const claimed = holders;
      await Promise.all(
        written.map(async ({ item, entry, view }, i) => {
          if (claimed[i] === entry.token) {
            outcomes[item.index] = view;
            return;
          }
          // A concurrent create of the same card claimed the entry first: this token goes, and the
          // card takes tokenize's path, which answers the winner.
          try {
            await this.store.delete(entry.token);
            later.set(item.fingerprint, [item.index, ...(later.get(item.fingerprint) ?? [])]);
          } catch (err) {
            outcomes[item.index] = asError(err);
          }
        }),
      );
    }

    await Promise.all(
      [...later.values()].map(async (indices) => {
        for (const index of indices.sort((a, b) => a - b)) {
          outcomes[index] = await this.tokenizeCard(cards[index] as CardToTokenize).catch(asError);
        }
      }),
    );
    return outcomes.map((outcome) => outcome ?? new TesseraError('internal_error'));
  }

  /** The new token's sealed records and the view the caller gets once they are saved. */
  private prepareToken(
    card: CardToTokenize,
    fingerprintKey: Buffer,
    ring: KeyRing,
    /** The card's fingerprint when the caller has it already (the import batch path). */
    known?: string,
  ): { entry: CardEntryToSave; view: TokenRecordView } {
    const mode = checkCardToTokenize(card);
    const now = this.now();
    const token = generateToken();
    const normal = retentionFor(card.expiryMonth, card.expiryYear, {
      cardGraceDays: this.opts.cardGraceDays,
      cvvTtlSeconds: this.opts.cvvTtlSeconds,
      now,
    });
    const retention =
      card.provisional === true
        ? provisionalRetention(
            normal,
            provisionalTtlSecondsOf(card, this.opts.browserTokenTtlSeconds ?? DEFAULT_BROWSER_TOKEN_TTL_SECONDS),
            now,
          )
        : normal;
    const secret: CardSecret = { number: card.number, holderName: card.holderName };
    const provisionalUntil = card.provisional === true ? retention.expiresAt.toISOString() : undefined;
    const fingerprint = known ?? fingerprintOf(fingerprintKey, card.merchantId, mode, card.number);
    const fields = { ...describeCardFields(card, mode, retention.expiresAt, now, fingerprint), compact: true as const };
    const sealedCard = this.seal(
      { merchantId: card.merchantId, token, kind: 'card', mode, provisionalUntil, ...cardBinding(fields) },
      encodeCardSecret(secret),
      ring,
    );
    const stored: StoredCard = { ...fields, metadataBound: true, sealed: sealedCard };
    const hasCvv = card.cvv !== '';
    const entry: CardEntryToSave = {
      token,
      card: stored,
      cardTtlMs: retention.cardTtlMs,
      cvv: hasCvv
        ? { record: this.sealCvv(card.merchantId, token, mode, card.cvv, now, retention.cvvTtlMs, ring), ttlMs: retention.cvvTtlMs }
        : undefined,
    };
    return { entry, view: toTokenRecordView(token, stored, hasCvv) };
  }

  async getToken(owner: TokenOwner, tokenOrAlias: string): Promise<TokenRecordView> {
    const token = await this.tokenOf(owner, tokenOrAlias);
    const { card } = await this.cardOf(owner, token);
    return this.recordView(token, card);
  }

  /**
   * The token a request names: itself, or the token one of its aliases names in the owner's index.
   * Another merchant's or mode's alias is not in that index, so it is answered like an unknown token.
   */
  private async tokenOf(owner: TokenOwner, tokenOrAlias: string): Promise<string> {
    if (isTokenShaped(tokenOrAlias)) return tokenOrAlias;
    const mode = keyModeOf(owner.mode);
    if (owner.merchantId === '' || mode === undefined || !isAliasShaped(tokenOrAlias)) throw new TesseraError('token_not_found');
    const token = await this.store.findAlias(owner.merchantId, mode, await this.aliasDigest(owner.merchantId, mode, tokenOrAlias));
    if (token === null || !isTokenShaped(token)) throw new TesseraError('token_not_found');
    return token;
  }

  /** The record as a merchant sees it: with whether a CVV waits and the token's aliases. */
  private async recordView(token: string, card: StoredCard, cvvAvailable?: boolean): Promise<TokenRecordView> {
    const [cvv, aliases] = await Promise.all([cvvAvailable ?? this.store.hasCvv(token), this.store.aliasesOf(token)]);
    return toTokenRecordView(token, card, cvv, false, aliases);
  }

  /**
   * The CVV's deadline (its Redis TTL as a timestamp) and a fresh nonce are bound into its
   * envelope: a copy restored after the deadline, or after the CVV was used, is refused.
   */
  private sealCvv(merchantId: string, token: string, mode: KeyMode, cvv: string, now: Date, ttlMs: number, ring: KeyRing): StoredCvv {
    const fields = {
      mode,
      nonce: secureRandomBytes(CVV_NONCE_BYTES).toString('base64url'),
      expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
      compact: true as const,
    };
    return { ...fields, sealed: this.seal({ merchantId, token, kind: 'cvv', mode, ...cvvBinding(fields) }, cvv, ring) };
  }

  /** The fingerprint index stops naming the token too (best effort: dedupe checks what it names anyway). */
  async deleteToken(owner: TokenOwner, tokenOrAlias: string): Promise<void> {
    const token = await this.tokenOf(owner, tokenOrAlias);
    const { card, mode } = await this.cardOf(owner, token);
    const aliases = await this.store.aliasesOf(token);
    await this.store.delete(token);
    if (card.fingerprint !== undefined) await this.store.releaseFingerprint(card.fingerprint, token).catch(() => undefined);
    // The index entries go too, so the aliases stop resolving at once and may be drawn again.
    await this.releaseAliases(owner.merchantId, mode, Object.values(aliases), token).catch(() => undefined);
  }

  /**
   * PATCH /v1/token/{token}: a re-issued card keeps its number and gets a new expiry and/or holder
   * name. The card is re-sealed with them (they are bound into the record) and kept until its new
   * expiry (+ grace); a provisional token keeps its deadline. The CVV is left as it is.
   */
  async updateToken(owner: TokenOwner, tokenOrAlias: string, change: CardChange): Promise<TokenRecordView> {
    checkCardChange(change);
    const token = await this.tokenOf(owner, tokenOrAlias);
    const { card } = await this.rewriteCard(owner, token, change);
    return this.recordView(token, card);
  }

  /**
   * POST /v1/token/{token}/cvc (and the CVC-only browser field): a freshly collected CVV for an
   * existing token, under the rules of one given at tokenization: its own nonce and deadline
   * (CVV_TTL_SECONDS, never past the card's), consumed by its first render. It replaces a CVV not
   * used yet. The card is authenticated, not decrypted: its brand and mode decide the CVV's length.
   */
  async attachCvv(owner: TokenOwner, tokenOrAlias: string, cvv: { value: string; isInteger: boolean }): Promise<TokenRecordView> {
    const token = await this.tokenOf(owner, tokenOrAlias);
    const { card, mode } = await this.cardOf(owner, token);
    const input = cvv.isInteger && /^\d{1,16}$/.test(cvv.value) ? Number(cvv.value) : cvv.value;
    // Test keys only ever hold test cards (checked at tokenization), which take any 3-4 digit CVV.
    await this.storeCvv(card, token, mode, validateCvv(input, card.brand, mode === 'test'));
    return this.recordView(token, card, true);
  }

  private async storeCvv(card: StoredCard, token: string, mode: KeyMode, cvv: string): Promise<void> {
    const now = this.now();
    const cardLeftMs = Date.parse(card.expiresAt) - now.getTime();
    const ttlMs = Math.max(1000, Math.min(this.opts.cvvTtlSeconds * 1000, Number.isFinite(cardLeftMs) ? cardLeftMs : 0));
    const ring = await this.sealingRing(card.merchantId, mode);
    await this.store.putCvv(token, this.sealCvv(card.merchantId, token, mode, cvv, now, ttlMs, ring), ttlMs);
  }

  /**
   * Re-seals a card with `change` applied, compare-and-set like retain. `sameNumber` (dedupe) makes
   * a card of another number, or a provisional one, answer token_not_found: the index entry that
   * named it is then treated as gone.
   */
  private async rewriteCard(
    owner: TokenOwner,
    token: string,
    change: CardChange,
    sameNumber?: string,
  ): Promise<{ card: StoredCard; mode: KeyMode }> {
    const mode = this.modeOfOwner(owner, token);
    // The sealing ring opens every record of the merchant too: a rewritten card moves to its KEK.
    const ring = await this.sealingRing(owner.merchantId, mode);
    for (let attempt = 0; attempt < RETAIN_ATTEMPTS; attempt++) {
      const raw = await this.store.readRaw('card', token);
      if (raw === null) throw new TesseraError('token_not_found');
      const found = this.owned(owner, mode, token, parseCard(raw), ring, 'open');
      const card = found.card;
      const secret = found.secret ?? this.openCardSecret(card, token, ring);
      if (sameNumber !== undefined && (card.provisional === true || secret.number !== sameNumber)) {
        throw new TesseraError('token_not_found');
      }
      const expiryMonth = change.expiryMonth ?? card.expiryMonth;
      const expiryYear = change.expiryYear ?? card.expiryYear;
      const holderName = change.holderName ?? secret.holderName;
      // Nothing to change (a repeated PATCH, concurrent dedupe creates of one card): no write, so
      // identical calls never contend for the record.
      const unchanged = expiryMonth === card.expiryMonth && expiryYear === card.expiryYear && holderName === secret.holderName;
      if (unchanged && card.mode !== undefined && card.metadataBound === true) return { card, mode };
      // A card rewritten for any reason leaves in format 6 (compact), like a new one.
      const now = this.now();
      const retention = retentionFor(expiryMonth, expiryYear, {
        cardGraceDays: this.opts.cardGraceDays,
        cvvTtlSeconds: this.opts.cvvTtlSeconds,
        now,
      });
      const expiresAt = card.provisional === true ? card.expiresAt : retention.expiresAt.toISOString();
      const cardTtlMs = card.provisional === true ? Math.max(1000, Date.parse(card.expiresAt) - now.getTime()) : retention.cardTtlMs;
      const { metadataBound: _bound, sealed: _sealed, ...kept } = card;
      const fields: Omit<StoredCard, 'sealed'> = {
        ...kept,
        mode,
        expiryMonth,
        expiryYear,
        expiresAt,
        holderNameAvailable: holderName.length > 0,
        compact: true,
      };
      const provisionalUntil = card.provisional === true ? expiresAt : undefined;
      const sealed = this.seal(
        { merchantId: card.merchantId, token, kind: 'card', mode, provisionalUntil, ...cardBinding(fields) },
        encodeCardSecret({ number: secret.number, holderName }),
        ring,
      );
      const next: StoredCard = { ...fields, metadataBound: true, sealed };
      if (await this.store.retainCard(token, raw, next, { cardTtlMs, cvvTtlMs: 0 })) {
        // The aliases live as long as the card they name.
        await this.extendAliases(owner.merchantId, mode, token, cardTtlMs).catch(() => undefined);
        // The index entry lives as long as the card it names.
        if (next.fingerprint !== undefined && next.provisional !== true) {
          await this.store.claimFingerprint(next.fingerprint, token, null, cardTtlMs).catch(() => undefined);
        }
        return { card: next, mode };
      }
    }
    throw new TesseraError('service_unavailable', { message: 'The token kept changing while it was being updated.' });
  }

  /**
   * Makes a provisional token an ordinary one: the card is re-sealed without its deadline and kept
   * until the card's expiry (+ grace) like any token; the CVV keeps its own CVV_TTL. Retaining a
   * token that is not provisional writes nothing and answers its record. Either way the card is
   * opened first, so a record edited in the store (say, stripped of its flag) fails here instead
   * of being answered as retained.
   */
  async retainToken(owner: TokenOwner, tokenOrAlias: string): Promise<TokenRecordView> {
    const token = await this.tokenOf(owner, tokenOrAlias);
    const mode = this.modeOfOwner(owner, token);
    const ring = await this.sealingRing(owner.merchantId, mode);
    for (let attempt = 0; attempt < RETAIN_ATTEMPTS; attempt++) {
      const raw = await this.store.readRaw('card', token);
      if (raw === null) throw new TesseraError('token_not_found');
      const { card } = this.owned(owner, mode, token, parseCard(raw), ring);
      if (card.provisional !== true) return this.recordView(token, card);
      const retention = retentionOnRetain(card, {
        cardGraceDays: this.opts.cardGraceDays,
        cvvTtlSeconds: this.opts.cvvTtlSeconds,
        now: this.now(),
      });
      const { provisional: _provisional, metadataBound: _bound, sealed: _sealed, ...ordinary } = card;
      const fields: Omit<StoredCard, 'sealed'> = { ...ordinary, mode, expiresAt: retention.expiresAt.toISOString() };
      let sealed: Envelope;
      try {
        // Keeps the record's format: the plaintext is carried over as it was sealed.
        sealed = rebindRecord(
          ring,
          this.cardContext(card, token),
          { merchantId: card.merchantId, token, kind: 'card', mode, ...cardBinding(fields) },
          card.sealed,
        );
      } catch (err) {
        throw this.openFailure(err, 'card', token);
      }
      const next: StoredCard = { ...fields, metadataBound: true, sealed };
      if (await this.store.retainCard(token, raw, next, { cardTtlMs: retention.cardTtlMs, cvvTtlMs: retention.cvvTtlMs })) {
        // Kept now, so `dedupe` may answer it (a provisional token is never indexed): best effort, like a create's entry.
        if (next.fingerprint !== undefined) {
          await this.store.claimFingerprint(next.fingerprint, token, null, retention.cardTtlMs).catch(() => undefined);
        }
        return this.recordView(token, next);
      }
    }
    throw new TesseraError('service_unavailable', { message: 'The token kept changing while it was being retained.' });
  }

  /** Returns the rendered body as UTF-8 bytes. It holds card data: never log it. */
  async render(owner: TokenOwner, tokenOrAlias: string, template: string, contentType: string): Promise<Buffer> {
    const card = await this.renderableCard(owner, await this.tokenOf(owner, tokenOrAlias));
    const maxBytes = this.renderMaxBytes;
    let cvv: string | undefined;
    // The CVV is decrypted only when the body asks for it, so it is in memory as rarely as possible,
    // and it is consumed by that first use (GETDEL): PCI DSS 3.3.1.2 forbids keeping it after
    // authorization. Every failure that does not depend on the CVV (a missing holder name, a body
    // too large once filled in) is raised first, so a refused body cannot burn it.
    if (templateUses(template, 'CARD_CVV')) {
      checkRenderable(template, { ...card.values, cvv: LONGEST_CVV }, contentType, maxBytes);
      cvv = await card.takeCvv();
    }
    return Buffer.from(renderPspBody(template, { ...card.values, cvv }, contentType, maxBytes), 'utf8');
  }

  /** The most bytes a rendered body may have (RENDER_MAX_BYTES): Render's limit, and RenderRoute's. */
  get renderMaxBytes(): number {
    return this.opts.renderMaxBytes ?? DEFAULT_RENDER_MAX_BYTES;
  }

  /**
   * For RenderRoute (app/renderRoute.ts): the card a token or one of its aliases names, opened as
   * Render opens it, or undefined when the value names none of this owner's (merchant and mode)
   * tokens: an outbound route leaves such a value as it is.
   */
  async cardForRender(owner: TokenOwner, tokenOrAlias: string): Promise<RenderableCard | undefined> {
    try {
      return await this.renderableCard(owner, await this.tokenOf(owner, tokenOrAlias));
    } catch (err) {
      if (err instanceof TesseraError && err.code === 'token_not_found') return undefined;
      throw err;
    }
  }

  private async renderableCard(owner: TokenOwner, token: string): Promise<RenderableCard> {
    // The ring that opened the card (its merchant and mode's KEK, or the root ring for an older record) opens its CVV.
    const { card, mode, secret, ring } = await this.cardWithSecretOf(owner, token);
    return {
      token,
      values: { number: secret.number, holderName: secret.holderName, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear },
      hasCvv: () => this.store.hasCvv(token),
      takeCvv: () => this.takeCvv(card, token, mode, ring),
    };
  }

  /**
   * The masked counterpart of render, for dry runs: nothing in the result is card data beyond
   * first 6 / last 4. The CVV is never decrypted; only its presence matters.
   */
  async preview(owner: TokenOwner, tokenOrAlias: string, template: string, contentType: string): Promise<PspBodyPreview> {
    const token = await this.tokenOf(owner, tokenOrAlias);
    const { card, secret } = await this.cardWithSecretOf(owner, token);
    const cvvPresent = templateUses(template, 'CARD_CVV') && (await this.store.hasCvv(token));
    return previewPspBody(
      template,
      {
        number: secret.number,
        holderName: secret.holderName,
        expiryMonth: card.expiryMonth,
        expiryYear: card.expiryYear,
        cvv: cvvPresent ? 'present' : undefined,
      },
      contentType,
    );
  }

  /**
   * Ready once the store answers and the fingerprint key is loaded. The key is kept in memory from
   * then on, so tokenize never again depends on the one Cluster slot that holds it (a master down
   * or a slot migrating there would otherwise refuse every card, not just its slot's).
   */
  async ready(): Promise<StoreHealth> {
    const health = await this.store.ping();
    if (!health.ok) return health;
    try {
      await this.fingerprintKey();
    } catch {
      return { ok: false, detail: 'the fingerprint key could not be loaded yet' };
    }
    return health;
  }

  /**
   * Malformed tokens, other merchants' tokens and tokens of the other mode are answered exactly
   * like missing ones, so a test key learns nothing about live tokens (and the reverse). A record
   * written before tokens had a mode is decrypted to derive its mode from the card; its secret is
   * returned so a render does not decrypt it twice.
   */
  private async cardOf(
    owner: TokenOwner,
    token: string,
    verify: 'authenticate' | 'open' = 'authenticate',
  ): Promise<{ card: StoredCard; mode: KeyMode; secret?: CardSecret; ring: KeyRing }> {
    const mode = this.modeOfOwner(owner, token);
    const card = await this.store.getCard(token);
    const ring = await this.readingRing(owner.merchantId, mode, card?.sealed.keyId);
    return { ...this.owned(owner, mode, token, card, ring, verify), ring };
  }

  /** The ring a merchant's records are sealed with: its own KEK, or the root ring without merchant keys. */
  private async sealingRing(merchantId: string, mode: KeyMode): Promise<KeyRing> {
    return this.opts.merchantKeys === undefined ? this.keyRing : this.opts.merchantKeys.forSealing(merchantId, mode);
  }

  /** A new token's sealing ring, once its card is known to be valid (so no KEK is made for a refused card). */
  private async sealingRingFor(card: CardToTokenize): Promise<KeyRing> {
    return this.sealingRing(card.merchantId, checkCardToTokenize(card));
  }

  /** The ring a merchant's records open with; `keyId` is the record's (see MerchantKeyRings.forReading). */
  private async readingRing(merchantId: string, mode: KeyMode, keyId?: string): Promise<KeyRing> {
    return this.opts.merchantKeys === undefined ? this.keyRing : this.opts.merchantKeys.forReading(merchantId, mode, keyId);
  }

  private modeOfOwner(owner: TokenOwner, token: string): KeyMode {
    const mode = keyModeOf(owner.mode);
    if (owner.merchantId === '' || mode === undefined || !isTokenShaped(token)) throw new TesseraError('token_not_found');
    return mode;
  }

  /**
   * The card if it belongs to the owner. A provisional token past its deadline is answered as
   * missing even when its record is still there (its Redis TTL edited, say); the deadline read
   * here is authenticated whenever the card is opened.
   */
  private owned(
    owner: TokenOwner,
    mode: KeyMode,
    token: string,
    card: StoredCard | null,
    ring: KeyRing,
    verify: 'authenticate' | 'open' = 'authenticate',
  ): { card: StoredCard; mode: KeyMode; secret?: CardSecret } {
    if (card === null || card.merchantId !== owner.merchantId || isPastProvisionalDeadline(card, this.now())) {
      throw new TesseraError('token_not_found');
    }
    if (card.mode !== undefined) {
      if (card.mode !== mode) throw new TesseraError('token_not_found');
      // The clear fields just read decided who may use the token: prove them before acting on them
      // (a render opens the card anyway, which proves them as well).
      if (verify === 'open') return { card, mode, secret: this.openCardSecret(card, token, ring) };
      this.authenticateCard(card, token, ring);
      return { card, mode };
    }
    const secret = this.openCardSecret(card, token, ring);
    if (modeOfLegacyCard(secret.number) !== mode) throw new TesseraError('token_not_found');
    return { card, mode, secret };
  }

  /**
   * For renders: the stored mode is bound into the envelope, so a record whose mode was edited
   * fails to decrypt here (internal_error) instead of rendering for the other mode.
   */
  private async cardWithSecretOf(
    owner: TokenOwner,
    token: string,
  ): Promise<{ card: StoredCard; mode: KeyMode; secret: CardSecret; ring: KeyRing }> {
    const { card, mode, secret, ring } = await this.cardOf(owner, token, 'open');
    return { card, mode, ring, secret: secret ?? this.openCardSecret(card, token, ring) };
  }

  /**
   * The CVV for its one use, or undefined (422 cvv_unavailable) when there is none or the one in
   * the store must not be used: already consumed once (its replay id is marked), past its sealed
   * deadline, or not authentic. Those three raise an alarm; the record is deleted either way.
   */
  private async takeCvv(card: StoredCard, token: string, mode: KeyMode, ring: KeyRing): Promise<string | undefined> {
    const now = this.now();
    const cvvTtlMs = this.opts.cvvTtlSeconds * 1000;
    const taken = await this.store.takeCvv(token, (record) => {
      // As long as any copy could pass the deadline check: the sealed deadline, and never less than CVV_TTL.
      const left = record.expiresAt === undefined ? NaN : Date.parse(record.expiresAt) - now.getTime();
      return { id: cvvReplayId(record), rememberMs: Math.max(cvvTtlMs, Number.isFinite(left) ? left : 0) + CVV_MARK_MARGIN_MS };
    });
    if (taken === null) return undefined;
    if (taken.outcome === 'replayed') {
      this.alarm('cvv_replayed', 'cvv', token);
      return undefined;
    }
    const cvv = this.openCvv(card, token, mode, taken.record, ring);
    if (cvv === undefined) return undefined;
    if (now.getTime() >= this.cvvDeadlineMs(card, taken.record)) {
      this.alarm('cvv_expired', 'cvv', token);
      return undefined;
    }
    return cvv;
  }

  /**
   * A format-4 CVV carries its own (authenticated) deadline. An older one is trusted no longer
   * than CVV_TTL_SECONDS after its card was made: such records are gone within one CVV_TTL of
   * the upgrade.
   */
  private cvvDeadlineMs(card: StoredCard, record: StoredCvv): number {
    const deadline =
      record.expiresAt !== undefined ? Date.parse(record.expiresAt) : Date.parse(card.createdAt) + this.opts.cvvTtlSeconds * 1000;
    return Number.isFinite(deadline) ? deadline : 0;
  }

  /**
   * A CVV record's mode field only says whether it was sealed with a mode (rewrap migrates a card
   * and its CVV one after the other); it is always opened under the token's verified mode, so
   * editing that field gains nothing.
   */
  private openCvv(card: StoredCard, token: string, mode: KeyMode, record: StoredCvv, ring: KeyRing): string | undefined {
    const ctx: EnvelopeContext = {
      merchantId: card.merchantId,
      token,
      kind: 'cvv',
      mode: record.mode === undefined ? null : mode,
      ...bindingOfCvv(record),
    };
    try {
      return this.open(ctx, record.sealed, 'cvv', token, ring);
    } catch (err) {
      // A forged CVV record is gone now (taken); the card is fine, so the caller gets cvv_unavailable.
      if (err instanceof TesseraError && err.code === 'token_not_found') return undefined;
      throw err;
    }
  }

  private seal(ctx: EnvelopeContext, plaintext: string | Buffer, ring: KeyRing): Envelope {
    const buf = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
    try {
      return sealRecord(ring, ctx, buf);
    } finally {
      buf.fill(0);
    }
  }

  private open(ctx: EnvelopeContext, envelope: Envelope, kind: RecordKind, token: string, ring: KeyRing): string {
    let buf: Buffer;
    try {
      buf = openRecord(ring, ctx, envelope);
    } catch (err) {
      throw this.openFailure(err, kind, token);
    }
    try {
      return buf.toString('utf8');
    } finally {
      buf.fill(0);
    }
  }

  /**
   * A record that does not authenticate is answered like a missing token (404): whoever its forged
   * fields name learns nothing, and it is never served. It raises an alarm. A KEK missing from the
   * ring is the operator's mistake, not tampering: internal_error, as before. A record whose
   * merchant KEK was crypto-shredded is deleted as far as anyone can tell: token_not_found, no alarm.
   */
  private openFailure(err: unknown, kind: RecordKind, token: string): TesseraError {
    if (err instanceof EnvelopeOpenError && err.reason === 'key_destroyed') return new TesseraError('token_not_found');
    if (err instanceof EnvelopeOpenError && err.reason !== 'unknown_key') {
      this.alarm('authentication_failed', kind, token);
      return new TesseraError('token_not_found');
    }
    return err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err });
  }

  private alarm(alarm: RecordAlarm['alarm'], record: RecordKind, token: string): void {
    this.opts.onAlarm?.({ alarm, record, token });
  }

  /** What a card record was sealed with, as its stored fields claim: opening it checks the claim. */
  private cardContext(card: StoredCard, token: string): EnvelopeContext {
    const provisionalUntil = card.provisional === true ? card.expiresAt : undefined;
    return { merchantId: card.merchantId, token, kind: 'card', mode: card.mode ?? null, provisionalUntil, ...bindingOfCard(card) };
  }

  /**
   * Checks that the card's clear fields are what it was sealed with, by unwrapping its data key
   * only: the PAN is not decrypted to answer GET or DELETE.
   */
  private authenticateCard(card: StoredCard, token: string, ring: KeyRing): void {
    try {
      authenticateRecord(ring, this.cardContext(card, token), card.sealed);
    } catch (err) {
      throw this.openFailure(err, 'card', token);
    }
  }

  private openCardSecret(card: StoredCard, token: string, ring: KeyRing): CardSecret {
    let plaintext: Buffer;
    try {
      plaintext = openRecord(ring, this.cardContext(card, token), card.sealed);
    } catch (err) {
      throw this.openFailure(err, 'card', token);
    }
    try {
      const secret = decodeCardSecret(plaintext);
      // The error must not carry the plaintext.
      if (secret === undefined) throw new TesseraError('internal_error', { message: 'A stored record is unreadable.' });
      return secret;
    } finally {
      plaintext.fill(0);
    }
  }
}
