import { TesseraError, type KeyMode } from '@tessera/common';
import {
  checkCardToTokenize,
  describeCard,
  isPastProvisionalDeadline,
  provisionalRetention,
  retentionFor,
  retentionOnRetain,
  toTokenRecordView,
  type CardSecret,
  type CardToTokenize,
  type StoredCard,
  type StoredCvv,
  type TokenOwner,
  type TokenRecordView,
} from './domain/card';
import { openRecord, rebindRecord, sealRecord, type EnvelopeContext, type Envelope } from './domain/envelope';
import type { KeyRing } from './domain/keyRing';
import { checkRenderable, DEFAULT_RENDER_MAX_BYTES, renderPspBody, templateUses, type CardValues } from './domain/renderPspBody';
import { previewPspBody, type PspBodyPreview } from './domain/previewPspBody';
import { generateToken, isTokenShaped } from './domain/token';
import { keyModeOf, modeOfLegacyCard } from './domain/tokenMode';
import type { CardEntryToSave, CardStore, StoreHealth } from './store/cardStore';
import { parseCard } from './store/records';

export interface VaultOptions {
  store: CardStore;
  keyRing: KeyRing;
  cvvTtlSeconds: number;
  cardGraceDays: number;
  /** The most bytes a rendered body may have (RENDER_MAX_BYTES); DEFAULT_RENDER_MAX_BYTES when not given. */
  renderMaxBytes?: number;
  /** BROWSER_TOKEN_TTL_SECONDS: how long a provisional token lives unless retained; default 3600. */
  browserTokenTtlSeconds?: number;
  now?: () => Date;
}

/** Stands in for the CVV when a body is checked before the CVV is taken: the longest CVV (Amex) bounds the size. */
const LONGEST_CVV = '0000';

const DEFAULT_BROWSER_TOKEN_TTL_SECONDS = 3600;
/** Retain is a compare-and-set; a card that keeps changing under it (key rotation) is read again this often. */
const RETAIN_ATTEMPTS = 5;

/** The vault's use cases: domain rules and crypto around the card store. Transport-agnostic. */
export class Vault {
  private readonly store: CardStore;
  private readonly keyRing: KeyRing;
  private readonly now: () => Date;

  constructor(private readonly opts: VaultOptions) {
    this.store = opts.store;
    this.keyRing = opts.keyRing;
    this.now = opts.now ?? (() => new Date());
  }

  async tokenize(card: CardToTokenize): Promise<TokenRecordView> {
    const { entry, view } = this.prepareToken(card);
    await this.store.save(entry);
    return view;
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
    for (const card of cards) {
      try {
        const { entry, view } = this.prepareToken(card);
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
    return outcomes;
  }

  /** The new token's sealed records and the view the caller gets once they are saved. */
  private prepareToken(card: CardToTokenize): { entry: CardEntryToSave; view: TokenRecordView } {
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
        ? provisionalRetention(normal, this.opts.browserTokenTtlSeconds ?? DEFAULT_BROWSER_TOKEN_TTL_SECONDS, now)
        : normal;
    const secret: CardSecret = { number: card.number, holderName: card.holderName };
    const provisionalUntil = card.provisional === true ? retention.expiresAt.toISOString() : undefined;
    const sealedCard = this.seal({ merchantId: card.merchantId, token, kind: 'card', mode, provisionalUntil }, JSON.stringify(secret));
    const stored = describeCard(card, mode, sealedCard, retention.expiresAt, now);
    const hasCvv = card.cvv !== '';
    const entry: CardEntryToSave = {
      token,
      card: stored,
      cardTtlMs: retention.cardTtlMs,
      cvv: hasCvv
        ? {
            record: { mode, sealed: this.seal({ merchantId: card.merchantId, token, kind: 'cvv', mode }, card.cvv) },
            ttlMs: retention.cvvTtlMs,
          }
        : undefined,
    };
    return { entry, view: toTokenRecordView(token, stored, hasCvv) };
  }

  async getToken(owner: TokenOwner, token: string): Promise<TokenRecordView> {
    const { card } = await this.cardOf(owner, token);
    return toTokenRecordView(token, card, await this.store.hasCvv(token));
  }

  async deleteToken(owner: TokenOwner, token: string): Promise<void> {
    await this.cardOf(owner, token);
    await this.store.delete(token);
  }

  /**
   * Makes a provisional token an ordinary one: the card is re-sealed without its deadline and kept
   * until the card's expiry (+ grace) like any token; the CVV keeps its own CVV_TTL. Retaining a
   * token that is not provisional writes nothing and answers its record. Either way the card is
   * opened first, so a record edited in the store (say, stripped of its flag) fails here instead
   * of being answered as retained.
   */
  async retainToken(owner: TokenOwner, token: string): Promise<TokenRecordView> {
    const mode = this.modeOfOwner(owner, token);
    for (let attempt = 0; attempt < RETAIN_ATTEMPTS; attempt++) {
      const raw = await this.store.readRaw('card', token);
      if (raw === null) throw new TesseraError('token_not_found');
      const { card } = this.owned(owner, mode, token, parseCard(raw));
      if (card.provisional !== true) {
        this.authenticateCard(card, token);
        return toTokenRecordView(token, card, await this.store.hasCvv(token));
      }
      const retention = retentionOnRetain(card, {
        cardGraceDays: this.opts.cardGraceDays,
        cvvTtlSeconds: this.opts.cvvTtlSeconds,
        now: this.now(),
      });
      let sealed: Envelope;
      try {
        sealed = rebindRecord(
          this.keyRing,
          this.cardContext(card, token),
          { merchantId: card.merchantId, token, kind: 'card', mode },
          card.sealed,
        );
      } catch (err) {
        throw new TesseraError('internal_error', { cause: err });
      }
      const { provisional: _provisional, ...ordinary } = card;
      const next: StoredCard = { ...ordinary, mode, expiresAt: retention.expiresAt.toISOString(), sealed };
      if (await this.store.retainCard(token, raw, next, { cardTtlMs: retention.cardTtlMs, cvvTtlMs: retention.cvvTtlMs })) {
        return toTokenRecordView(token, next, await this.store.hasCvv(token));
      }
    }
    throw new TesseraError('service_unavailable', { message: 'The token kept changing while it was being retained.' });
  }

  /** Returns the rendered body as UTF-8 bytes. It holds card data: never log it. */
  async render(owner: TokenOwner, token: string, template: string, contentType: string): Promise<Buffer> {
    const { card, mode, secret } = await this.cardWithSecretOf(owner, token);
    const maxBytes = this.opts.renderMaxBytes ?? DEFAULT_RENDER_MAX_BYTES;
    const values: CardValues = {
      number: secret.number,
      holderName: secret.holderName,
      expiryMonth: card.expiryMonth,
      expiryYear: card.expiryYear,
    };
    let cvv: string | undefined;
    // The CVV is decrypted only when the body asks for it, so it is in memory as rarely as possible,
    // and it is consumed by that first use (GETDEL): PCI DSS 3.3.1.2 forbids keeping it after
    // authorization. Every failure that does not depend on the CVV (a missing holder name, a body
    // too large once filled in) is raised first, so a refused body cannot burn it.
    if (templateUses(template, 'CARD_CVV')) {
      checkRenderable(template, { ...values, cvv: LONGEST_CVV }, contentType, maxBytes);
      const record = await this.store.takeCvv(token);
      cvv = record === null ? undefined : this.openCvv(card, token, mode, record);
    }
    return Buffer.from(renderPspBody(template, { ...values, cvv }, contentType, maxBytes), 'utf8');
  }

  /**
   * The masked counterpart of render, for dry runs: nothing in the result is card data beyond
   * first 6 / last 4. The CVV is never decrypted; only its presence matters.
   */
  async preview(owner: TokenOwner, token: string, template: string, contentType: string): Promise<PspBodyPreview> {
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

  async ready(): Promise<StoreHealth> {
    return this.store.ping();
  }

  /**
   * Malformed tokens, other merchants' tokens and tokens of the other mode are answered exactly
   * like missing ones, so a test key learns nothing about live tokens (and the reverse). A record
   * written before tokens had a mode is decrypted to derive its mode from the card; its secret is
   * returned so a render does not decrypt it twice.
   */
  private async cardOf(owner: TokenOwner, token: string): Promise<{ card: StoredCard; mode: KeyMode; secret?: CardSecret }> {
    const mode = this.modeOfOwner(owner, token);
    return this.owned(owner, mode, token, await this.store.getCard(token));
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
  ): { card: StoredCard; mode: KeyMode; secret?: CardSecret } {
    if (card === null || card.merchantId !== owner.merchantId || isPastProvisionalDeadline(card, this.now())) {
      throw new TesseraError('token_not_found');
    }
    if (card.mode !== undefined) {
      if (card.mode !== mode) throw new TesseraError('token_not_found');
      return { card, mode };
    }
    const secret = this.openCardSecret(card, token);
    if (modeOfLegacyCard(secret.number) !== mode) throw new TesseraError('token_not_found');
    return { card, mode, secret };
  }

  /**
   * For renders: the stored mode is bound into the envelope, so a record whose mode was edited
   * fails to decrypt here (internal_error) instead of rendering for the other mode.
   */
  private async cardWithSecretOf(owner: TokenOwner, token: string): Promise<{ card: StoredCard; mode: KeyMode; secret: CardSecret }> {
    const { card, mode, secret } = await this.cardOf(owner, token);
    return { card, mode, secret: secret ?? this.openCardSecret(card, token) };
  }

  /**
   * A CVV record's mode field only says whether it was sealed with a mode (rewrap migrates a card
   * and its CVV one after the other); it is always opened under the token's verified mode, so
   * editing that field gains nothing.
   */
  private openCvv(card: StoredCard, token: string, mode: KeyMode, record: StoredCvv): string {
    return this.open({ merchantId: card.merchantId, token, kind: 'cvv', mode: record.mode === undefined ? null : mode }, record.sealed);
  }

  private seal(ctx: EnvelopeContext, plaintext: string): Envelope {
    const buf = Buffer.from(plaintext, 'utf8');
    try {
      return sealRecord(this.keyRing, ctx, buf);
    } finally {
      buf.fill(0);
    }
  }

  private open(ctx: EnvelopeContext, envelope: Envelope): string {
    let buf: Buffer;
    try {
      buf = openRecord(this.keyRing, ctx, envelope);
    } catch (err) {
      throw new TesseraError('internal_error', { cause: err });
    }
    try {
      return buf.toString('utf8');
    } finally {
      buf.fill(0);
    }
  }

  /** What a card record was sealed with, as its stored fields claim: opening it checks the claim. */
  private cardContext(card: StoredCard, token: string): EnvelopeContext {
    const provisionalUntil = card.provisional === true ? card.expiresAt : undefined;
    return { merchantId: card.merchantId, token, kind: 'card', mode: card.mode ?? null, provisionalUntil };
  }

  /** Opens the card only to check that its stored fields are what it was sealed with. */
  private authenticateCard(card: StoredCard, token: string): void {
    try {
      openRecord(this.keyRing, this.cardContext(card, token), card.sealed).fill(0);
    } catch (err) {
      throw new TesseraError('internal_error', { cause: err });
    }
  }

  private openCardSecret(card: StoredCard, token: string): CardSecret {
    const text = this.open(this.cardContext(card, token), card.sealed);
    try {
      const parsed = JSON.parse(text) as Partial<CardSecret>;
      if (typeof parsed.number === 'string' && typeof parsed.holderName === 'string') {
        return { number: parsed.number, holderName: parsed.holderName };
      }
    } catch {
      // fall through: the error below must not carry the plaintext
    }
    throw new TesseraError('internal_error', { message: 'A stored record is unreadable.' });
  }
}
