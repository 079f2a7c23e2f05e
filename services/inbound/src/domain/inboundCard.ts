import { TesseraError, validateCard, type KeyMode, type ValidCard } from '@tessera/common';
import type { AliasFormat, Place } from '@tessera/routes';

/**
 * One card per request (docs/proxies.md, "Inbound routes"): the places a route's filters found are
 * one card, number, expiry, CVV and holder as the filters name them. Pure: the use case tokenizes.
 */

/** The card the places hold, checked as the vault will check it; undefined when they hold no card number. */
export function cardOfPlaces(places: readonly Place[], mode: KeyMode, now: Date): ValidCard | undefined {
  const numbers = new Set(places.filter((p) => p.store === 'number').map((p) => p.value.replace(/[\s-]/g, '')));
  numbers.delete('');
  if (numbers.size === 0) return undefined;
  // Which of two cards is "the" card is a guess either way; a guess that stores the wrong one, or
  // forwards the other in the clear, is worse than a refusal the sender can act on.
  if (numbers.size > 1) throw new TesseraError('multiple_cards');
  const number = [...numbers][0] as string;
  const first = (store: Place['store']): string | undefined => places.find((p) => p.store === store && p.value.trim() !== '')?.value.trim();
  const expiry = expiryOf(first('expiry'), first('expiry_month'), first('expiry_year'));
  if (expiry === undefined) throw new TesseraError('card_expiry_missing');
  const cvv = first('cvv');
  const holder = first('holder');
  return validateCard(
    {
      number,
      expiryMonth: expiry.month,
      expiryYear: expiry.year,
      ...(cvv !== undefined ? { cvv } : {}),
      ...(holder !== undefined ? { holderName: holder } : {}),
    },
    mode,
    now,
  );
}

/** A two-digit year is this century's, as card faces print it. */
function fullYear(text: string): number {
  const year = Number(text);
  return text.length === 2 ? 2000 + year : year;
}

/**
 * The expiry from `expiry` (MM/YY, MM/YYYY, MM-YY, MMYY) or from month and year places. A value that
 * is not a number is NaN here and refused by validateCard as the parameter it is.
 */
export function expiryOf(
  combined: string | undefined,
  month: string | undefined,
  year: string | undefined,
): { month: number; year: number } | undefined {
  if (combined !== undefined) {
    const match = /^(\d{1,2})\s*[/ -]?\s*(\d{2}|\d{4})$/.exec(combined);
    if (match === null) return { month: Number.NaN, year: Number.NaN };
    return { month: Number(match[1]), year: fullYear(match[2] as string) };
  }
  if (month === undefined || year === undefined) return undefined;
  return { month: /^\d{1,2}$/.test(month) ? Number(month) : Number.NaN, year: /^\d{2}$|^\d{4}$/.test(year) ? fullYear(year) : Number.NaN };
}

/**
 * The alias formats to ask the vault for: the non-`token` formats of the places that get an alias
 * (number and CVV places, as docs/routes.md and the dry run say).
 */
export function aliasFormatsOf(places: readonly Place[]): AliasFormat[] {
  return [...new Set(places.filter(getsAlias).map((p) => p.aliasFormat))].filter((f) => f !== 'token');
}

/**
 * Inbound, the number's place and the CVV's get an alias of the card (so an upstream that checks
 * "a card number and a CVC are present" passes, and an outbound route can put each back); the
 * expiry and the holder stay, stored as well: without the number they are not card data the
 * merchant must protect, and its order records use them.
 */
export function getsAlias(place: Pick<Place, 'store'>): boolean {
  return place.store === 'number' || place.store === 'cvv';
}

/** What goes in each place: the alias of its filter's format (`token`: the token itself). */
export function aliasReplacements(
  places: readonly Place[],
  token: string,
  aliases: Readonly<Record<string, string>>,
): Array<{ place: Place; text: string }> {
  return places.filter(getsAlias).map((place) => {
    const text = place.aliasFormat === 'token' ? token : aliases[place.aliasFormat];
    // The vault answers every format asked for; a missing one must not leave the card in place.
    if (text === undefined) throw new TesseraError('internal_error');
    return { place, text };
  });
}
