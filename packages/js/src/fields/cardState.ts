/**
 * What the card fields know about what the shopper has typed so far, with the same rules as the
 * API (packages/common/src/card): the iframe imports those files, it does not copy them, so the
 * fields never accept a card the API would refuse for its number, expiry or CVC.
 */
import { cvvLengthForBrand, detectBrand, isValidLengthForBrand, MAX_PAN_LENGTH, type Brand } from '../../../common/src/card/brands';
import { isExpired, isTooFarAhead } from '../../../common/src/card/expiry';
import { isLuhnValid } from '../../../common/src/card/luhn';
import { LOCALE_TEXTS } from '../shared/locale';
import type { ChangeEventPayload, FieldErrorCode, FieldName } from '../shared/protocol';

export interface FieldCheck {
  empty: boolean;
  /** Enough has been typed to judge the field, and it is valid. */
  complete: boolean;
  /** The problem if the shopper stopped here (incomplete counts as a problem). */
  error?: FieldErrorCode;
}

export function digitsOf(value: string): string {
  return value.replace(/\D/g, '');
}

/** The longest number a brand allows, so typing stops there. */
export function maxLengthForBrand(brand: Brand): number {
  for (let n = MAX_PAN_LENGTH; n >= 12; n--) if (isValidLengthForBrand(brand, n)) return n;
  return MAX_PAN_LENGTH;
}

/** Groups as printed on the card: Amex 4-6-5, others in fours. */
export function formatCardNumber(raw: string): string {
  const brand = detectBrand(digitsOf(raw));
  const digits = digitsOf(raw).slice(0, maxLengthForBrand(brand));
  if (brand === 'amex') return [digits.slice(0, 4), digits.slice(4, 10), digits.slice(10)].filter(Boolean).join(' ');
  return digits.replace(/(\d{4})(?=\d)/g, '$1 ');
}

export function checkNumber(raw: string): FieldCheck & { brand: Brand; digits: string } {
  const digits = digitsOf(raw);
  const brand = detectBrand(digits);
  if (digits.length === 0) return { empty: true, complete: false, error: 'incomplete_number', brand, digits };
  const max = maxLengthForBrand(brand);
  const lengthOk = isValidLengthForBrand(brand, digits.length);
  if (lengthOk && isLuhnValid(digits)) return { empty: false, complete: true, brand, digits };
  // A number at a full length that fails Luhn is wrong; a shorter one may just be unfinished
  // (a 13-digit Visa prefix of a 16-digit card).
  const unfinished = digits.length < max && !(lengthOk && digits.length >= 16);
  return { empty: false, complete: false, error: unfinished ? 'incomplete_number' : 'invalid_number', brand, digits };
}

/** `MM / YY` as typed: a leading 2-9 is a month on its own (`4` -> `04`). */
/**
 * The expiry as MMYY or MMYYYY digits, with a month typed as one digit completed: "4" can only be
 * April; "1/30" and "1 30" say January with the separator; "130" has no month 13, so it is January
 * 2030 as well, unless a separator after the "13" says the shopper meant 13 ("13/30" stays invalid).
 */
function expiryDigits(raw: string): string {
  const digits = digitsOf(raw);
  const oneDigitMonth = /^[2-9]/.test(digits) || /^\D*1\D/.test(raw) || /^\D*1[3-9](\d|$)/.test(raw);
  return (oneDigitMonth ? `0${digits}` : digits).slice(0, 6);
}

/** `MM / YY`; a four-digit year (typed or autofilled, "12/2030") is shown as the field asks for it, "12 / 30". */
export function formatExpiry(raw: string): string {
  const digits = expiryDigits(raw);
  const year = digits.length === 6 && digits.slice(2, 4) === '20' ? digits.slice(4) : digits.slice(2);
  return digits.length > 2 ? `${digits.slice(0, 2)} / ${year}` : digits;
}

export interface ExpiryValue {
  month: number;
  year: number;
}

export function checkExpiry(raw: string, now: Date = new Date()): FieldCheck & { value?: ExpiryValue } {
  const digits = expiryDigits(raw);
  if (digits.length === 0) return { empty: true, complete: false, error: 'incomplete_expiry' };
  if (digits.length < 4 || digits.length === 5) return { empty: false, complete: false, error: 'incomplete_expiry' };
  const month = Number(digits.slice(0, 2));
  const yearDigits = digits.slice(2);
  const year = yearDigits.length === 2 ? 2000 + Number(yearDigits) : Number(yearDigits);
  if (month < 1 || month > 12 || isTooFarAhead(year, now)) return { empty: false, complete: false, error: 'invalid_expiry' };
  if (isExpired(month, year, now)) return { empty: false, complete: false, error: 'expired_card' };
  return { empty: false, complete: true, value: { month, year } };
}

export function checkCvc(raw: string, brand: Brand): FieldCheck {
  const digits = digitsOf(raw);
  if (digits.length === 0) return { empty: true, complete: false, error: 'incomplete_cvc' };
  // Before the brand is known any 3-4 digits may be right (the API accepts both for unknown).
  const expected = brand === 'unknown' ? [3, 4] : [cvvLengthForBrand(brand)];
  if (expected.includes(digits.length)) return { empty: false, complete: true };
  if (digits.length < Math.min(...expected)) return { empty: false, complete: false, error: 'incomplete_cvc' };
  return { empty: false, complete: false, error: 'invalid_cvc' };
}

export interface FieldValues {
  number: string;
  expiry: string;
  cvc: string;
  name: string;
}

export interface FieldChecks {
  number: FieldCheck;
  expiry: FieldCheck & { value?: ExpiryValue };
  cvc: FieldCheck;
  brand: Brand;
}

export function checkAll(values: FieldValues, now: Date = new Date()): FieldChecks {
  const number = checkNumber(values.number);
  return { number, expiry: checkExpiry(values.expiry, now), cvc: checkCvc(values.cvc, number.brand), brand: number.brand };
}

const ORDER = ['number', 'expiry', 'cvc'] as const;
/** The checked card inputs (the holder name is never checked). */
export type CardField = (typeof ORDER)[number];

/**
 * `fields` are the inputs in play: all three, or only the CVC for the CVC-only field.
 * The change event the merchant's page receives: whether anything is typed, whether the whole
 * card is ready to tokenize, and the first error the shopper is being shown (errors appear after
 * a field loses focus, so `shown` decides which errors count).
 */
export function changePayload(
  checks: FieldChecks,
  values: FieldValues,
  shown: ReadonlySet<FieldName>,
  fields: readonly CardField[] = ORDER,
  messages: Record<FieldErrorCode, string> = ERROR_MESSAGES,
): ChangeEventPayload {
  const empty = fields.every((f) => checks[f].empty) && values.name.trim() === '';
  const complete = fields.every((f) => checks[f].complete);
  const visible = fields.find((f) => shown.has(f) && checks[f].error !== undefined);
  const payload: ChangeEventPayload = { empty, complete, valid: visible === undefined, brand: checks.brand };
  const code = visible === undefined ? undefined : checks[visible].error;
  return code === undefined ? payload : { ...payload, error: { code, message: messages[code] } };
}

/** The English messages, the default; every language's are in shared/locale.ts (the iframe shows the merchant's `locale`). */
export const ERROR_MESSAGES: Record<FieldErrorCode, string> = LOCALE_TEXTS.en.errors;
