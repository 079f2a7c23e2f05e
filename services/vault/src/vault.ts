import { TesseraError, type KeyMode } from '@tessera/common';
import {
  checkCardToTokenize,
  describeCard,
  retentionFor,
  toTokenRecordView,
  type CardSecret,
  type CardToTokenize,
  type StoredCard,
  type StoredCvv,
  type TokenOwner,
  type TokenRecordView,
} from './domain/card';
import { openRecord, sealRecord, type EnvelopeContext, type Envelope } from './domain/envelope';
import type { KeyRing } from './domain/keyRing';
import { renderPspBody, templateUses } from './domain/renderPspBody';
import { previewPspBody, type PspBodyPreview } from './domain/previewPspBody';
import { generateToken, isTokenShaped } from './domain/token';
import { keyModeOf, modeOfLegacyCard } from './domain/tokenMode';
import type { CardEntryToSave, CardStore, StoreHealth } from './store/cardStore';

export interface VaultOptions {
  store: CardStore;
  keyRing: KeyRing;
  cvvTtlSeconds: number;
  cardGraceDays: number;
  now?: () => Date;
}

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
   * on), and the valid ones are written together. When that write fails, the whole call fails:
   * none of the new tokens has been handed out, so none is lost.
   */
  async tokenizeBatch(cards: readonly CardToTokenize[]): Promise<Array<TokenRecordView | TesseraError>> {
    const outcomes: Array<TokenRecordView | TesseraError> = [];
    const entries: CardEntryToSave[] = [];
    for (const card of cards) {
      try {
        const { entry, view } = this.prepareToken(card);
        entries.push(entry);
        outcomes.push(view);
      } catch (err) {
        outcomes.push(err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err }));
      }
    }
    await this.store.saveMany(entries);
    return outcomes;
  }

  /** The new token's sealed records and the view the caller gets once they are saved. */
  private prepareToken(card: CardToTokenize): { entry: CardEntryToSave; view: TokenRecordView } {
    const mode = checkCardToTokenize(card);
    const now = this.now();
    const token = generateToken();
    const retention = retentionFor(card.expiryMonth, card.expiryYear, {
      cardGraceDays: this.opts.cardGraceDays,
      cvvTtlSeconds: this.opts.cvvTtlSeconds,
      now,
    });
    const secret: CardSecret = { number: card.number, holderName: card.holderName };
    const sealedCard = this.seal({ merchantId: card.merchantId, token, kind: 'card', mode }, JSON.stringify(secret));
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

  /** Returns the rendered body as UTF-8 bytes. It holds card data: never log it. */
  async render(owner: TokenOwner, token: string, template: string, contentType: string): Promise<Buffer> {
    const { card, mode, secret } = await this.cardWithSecretOf(owner, token);
    let cvv: string | undefined;
    // The CVV is decrypted only when the body asks for it, so it is in memory as rarely as possible,
    // and it is consumed by that first use (GETDEL): PCI DSS 3.3.1.2 forbids keeping it after
    // authorization. Failures that do not depend on the CVV are raised first so they cannot burn it.
    if (templateUses(template, 'CARD_CVV')) {
      if (templateUses(template, 'CARD_HOLDER') && secret.holderName === '') throw new TesseraError('holder_name_unavailable');
      const record = await this.store.takeCvv(token);
      cvv = record === null ? undefined : this.openCvv(card, token, mode, record);
    }
    const body = renderPspBody(
      template,
      { number: secret.number, holderName: secret.holderName, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, cvv },
      contentType,
    );
    return Buffer.from(body, 'utf8');
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
    const mode = keyModeOf(owner.mode);
    if (owner.merchantId === '' || mode === undefined || !isTokenShaped(token)) throw new TesseraError('token_not_found');
    const card = await this.store.getCard(token);
    if (card === null || card.merchantId !== owner.merchantId) throw new TesseraError('token_not_found');
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
      // An HSM that cannot be reached is service_unavailable; anything else is a record that does not open.
      if (err instanceof TesseraError) throw err;
      throw new TesseraError('internal_error', { cause: err });
    }
    try {
      return buf.toString('utf8');
    } finally {
      buf.fill(0);
    }
  }

  private openCardSecret(card: StoredCard, token: string): CardSecret {
    const text = this.open({ merchantId: card.merchantId, token, kind: 'card', mode: card.mode ?? null }, card.sealed);
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
