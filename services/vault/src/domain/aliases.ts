import { randomInt, randomUUID } from 'node:crypto';
import { detectBrand, isLuhnValid, isTestCard, isValidLengthForBrand } from '@tessera/common';

/**
 * Aliases: other names of a token, in shapes legacy systems accept where a card number used to go
 * (VGS calls the first two FPE_SIX_T_FOUR and FPE_T_FOUR). The random digits come from the CSPRNG
 * and never from the card: an alias reveals at most what PCI DSS 3.4.1 already allows beside a token
 * (BIN and last 4). Uniqueness per merchant and mode is the alias index's job (the store), not this
 * module's: these are pure draws.
 */
export const ALIAS_FORMATS = ['card_bin_last4', 'card_last4', 'uuid'] as const;
export type AliasFormat = (typeof ALIAS_FORMATS)[number];

export function isAliasFormat(value: string): value is AliasFormat {
  return (ALIAS_FORMATS as readonly string[]).includes(value);
}

/** Digits kept from the card at the start and at the end, per numeric format. */
const KEPT: Record<Exclude<AliasFormat, 'uuid'>, { head: number; tail: number }> = {
  card_bin_last4: { head: 6, tail: 4 },
  card_last4: { head: 0, tail: 4 },
};

/** A draw that equals the card itself is drawn again; after this many the card is too short to alias. */
const MAX_DRAWS = 64;

/**
 * One alias of `format` for the card `number` (digits only, Luhn-valid, 12-19 digits): numeric
 * formats keep the card's length and the kept digits, randomize the rest (a card_last4 alias never
 * starts with 0, which no issuer's range does), and fix one random digit so the whole passes Luhn.
 * Never equal to `number`, nor to a published test card: a test card is always a card, so the vault
 * need not look one up in the alias index (test keys tokenize nothing else). A card_last4 alias's
 * random head may fall in another brand's range: it is drawn again until its length fits the brand
 * its digits name, so validators that check brand lengths accept it as they accepted the card.
 */
export function drawAlias(format: AliasFormat, number: string): string {
  if (format === 'uuid') return randomUUID();
  const { head, tail } = KEPT[format];
  const brandLengthMatters = fitsBrandLength(number);
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const alias = luhnValidDraw(number, head, tail, format === 'card_last4');
    if (alias !== number && !isTestCard(alias) && (!brandLengthMatters || fitsBrandLength(alias))) return alias;
  }
  throw new Error('the card leaves no room for an alias other than itself');
}

/** Whether the number's length is one its brand (by its leading digits) issues. */
function fitsBrandLength(digits: string): boolean {
  return isValidLengthForBrand(detectBrand(digits), digits.length);
}

function luhnValidDraw(number: string, head: number, tail: number, nonZeroFirst: boolean): string {
  const digits = [...number].map(Number);
  const free: number[] = [];
  for (let i = head; i < digits.length - tail; i++) free.push(i);
  if (free.length === 0) throw new Error('the card has no digits to randomize');
  for (const i of free) digits[i] = i === 0 && nonZeroFirst ? 1 + randomInt(9) : randomInt(10);
  // The check position is one of the free ones, chosen at random, so no digit is fixed by the card.
  // Position 0 is avoided when it must not be 0 (a 0 there might be the one Luhn asks for).
  const candidates = nonZeroFirst && free.length > 1 ? free.filter((i) => i !== 0) : free;
  const check = candidates[randomInt(candidates.length)] as number;
  for (let d = 0; d <= 9; d++) {
    if (check === 0 && nonZeroFirst && d === 0) continue;
    digits[check] = d;
    const text = digits.join('');
    if (isLuhnValid(text)) return text;
  }
  // Every position's digit maps 0-9 onto all ten residues, so one d always fits (unless it is 0 at position 0).
  return luhnValidDraw(number, head, tail, nonZeroFirst);
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NUMERIC_ALIAS = /^\d{12,19}$/;

/** Whether `value` could be an alias of any format (what the vault looks up in the alias index); a published test card never is. */
export function isAliasShaped(value: string): boolean {
  return (NUMERIC_ALIAS.test(value) && !isTestCard(value)) || UUID_V4.test(value);
}

/** Whether `alias` has the shape of `format` for the card `number` (tests and the store's checks). */
export function fitsFormat(format: AliasFormat, alias: string, number: string): boolean {
  if (format === 'uuid') return UUID_V4.test(alias);
  const { head, tail } = KEPT[format];
  return (
    alias.length === number.length &&
    /^\d+$/.test(alias) &&
    isLuhnValid(alias) &&
    alias !== number &&
    alias.slice(0, head) === number.slice(0, head) &&
    alias.slice(-tail) === number.slice(-tail) &&
    (format !== 'card_last4' || alias[0] !== '0')
  );
}
