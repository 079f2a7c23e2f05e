import type { StoredCard, StoredCvv } from './card';
import type { EnvelopeContext } from './envelope';
import { compactCardHeader, compactCvvHeader } from './compactCard';

/**
 * The clear fields of a format-4 record, in a fixed order, as bound into its envelope's AAD
 * (EnvelopeContext.metadata). Any edit to one of them in the store makes the record fail to open.
 * The order is part of the format: append new fields, never reorder.
 */
export function cardMetadata(card: Omit<StoredCard, 'sealed' | 'metadataBound'>): string {
  // Format 5 appends the BIN and fingerprint; a format-4 record's metadata stays what it was sealed with.
  const format5 = card.fingerprint === undefined ? [] : [card.bin ?? null, card.fingerprint];
  return JSON.stringify([
    'card',
    card.merchantId,
    card.mode ?? null,
    card.provisional === true,
    card.last4,
    card.brand,
    card.expiryMonth,
    card.expiryYear,
    card.createdAt,
    card.expiresAt,
    card.holderNameAvailable,
    ...format5,
  ]);
}

export function cvvMetadata(cvv: Pick<StoredCvv, 'nonce' | 'expiresAt'>): string {
  return JSON.stringify(['cvv', cvv.nonce ?? null, cvv.expiresAt ?? null]);
}

/**
 * What a card with these fields is sealed with: a format-6 card (compact) binds its binary
 * header under the v6 labels, a format-4/5 one its JSON metadata.
 */
export function cardBinding(card: Omit<StoredCard, 'sealed' | 'metadataBound'>): Pick<EnvelopeContext, 'metadata' | 'format'> {
  if (card.compact === true) return { metadata: compactCardHeader(card).toString('base64'), format: 6 };
  return { metadata: cardMetadata(card) };
}

/** What a stored card was sealed with: nothing for a record older than format 4. */
export function bindingOfCard(card: StoredCard): Pick<EnvelopeContext, 'metadata' | 'format'> {
  return card.metadataBound === true ? cardBinding(card) : {};
}

/** What a CVV with these fields is sealed with: format 6 (compact) its binary header, format 4 its JSON metadata. */
export function cvvBinding(cvv: Omit<StoredCvv, 'sealed'>): Pick<EnvelopeContext, 'metadata' | 'format'> {
  if (cvv.compact === true) return { metadata: compactCvvHeader(cvv).toString('base64'), format: 6 };
  return { metadata: cvvMetadata(cvv) };
}

/** What a stored CVV was sealed with: nothing for a record older than format 4. */
export function bindingOfCvv(cvv: StoredCvv): Pick<EnvelopeContext, 'metadata' | 'format'> {
  return cvv.nonce !== undefined && cvv.expiresAt !== undefined ? cvvBinding(cvv) : {};
}

/**
 * What identifies one sealed CVV for anti-replay: its nonce (authenticated in format 4), or for an
 * older record the bytes of its data IV (a GCM IV is authenticated by the tag, and decoding to
 * bytes first means a re-encoded copy of the same IV is still the same CVV).
 */
export function cvvReplayId(cvv: StoredCvv): string {
  if (cvv.nonce !== undefined) return `n:${cvv.nonce}`;
  return `iv:${Buffer.from(cvv.sealed.iv, 'base64').toString('hex')}`;
}
