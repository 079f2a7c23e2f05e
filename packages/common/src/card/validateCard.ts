import { TesseraError } from '../errors';
import { detectBrand, isValidLengthForBrand, MAX_PAN_LENGTH, MIN_PAN_LENGTH, type Brand } from './brands';
import { normalizeCvv } from './cvv';
import { isExpired, isTooFarAhead, MAX_YEARS_AHEAD } from './expiry';
import { isLuhnValid } from './luhn';
import { isTestCard } from './testCards';

export type KeyMode = 'test' | 'live';

export interface CardInput {
  number: string;
  holderName?: string | undefined;
  expiryMonth: number;
  expiryYear: number;
  cvv?: number | string | undefined;
}

export interface ValidCard {
  number: string;
  brand: Brand;
  holderName?: string;
  expiryMonth: number;
  expiryYear: number;
  cvv?: string;
}

/** Removes the spaces and hyphens people type; anything else non-numeric stays and fails. */
export function normalizeCardNumber(raw: string): string {
  return raw.replace(/[\s-]/g, '');
}

/**
 * The card rules of PRODUCT.md, in the order a user fixes them: number, expiry, CVV, then the
 * test/live mode. Throws a TesseraError naming the offending parameter; messages never echo the
 * submitted values.
 */
export function validateCard(input: CardInput, mode: KeyMode, now: Date = new Date()): ValidCard {
  const number = normalizeCardNumber(input.number);
  if (!/^\d+$/.test(number)) {
    throw new TesseraError('card_number_invalid', {
      param: 'number',
      message: 'The card number must contain only digits, spaces or hyphens.',
    });
  }
  if (number.length < MIN_PAN_LENGTH || number.length > MAX_PAN_LENGTH) {
    throw new TesseraError('card_number_invalid', {
      param: 'number',
      message: `The card number must have ${MIN_PAN_LENGTH} to ${MAX_PAN_LENGTH} digits.`,
    });
  }
  if (!isLuhnValid(number)) {
    throw new TesseraError('card_number_invalid', { param: 'number', message: 'The card number fails the Luhn check.' });
  }
  const brand = detectBrand(number);
  if (!isValidLengthForBrand(brand, number.length)) {
    throw new TesseraError('card_number_invalid', {
      param: 'number',
      message: `The card number has the wrong length for a ${brand} card.`,
    });
  }

  validateExpiry(input.expiryMonth, input.expiryYear, now);

  const testCard = isTestCard(number);
  const cvv = input.cvv === undefined ? undefined : validateCvv(input.cvv, brand, testCard);

  if (mode === 'live' && testCard) throw new TesseraError('test_card_in_live_mode', { param: 'number' });
  if (mode === 'test' && !testCard) throw new TesseraError('live_card_in_test_mode', { param: 'number' });

  const card: ValidCard = { number, brand, expiryMonth: input.expiryMonth, expiryYear: input.expiryYear };
  if (input.holderName !== undefined && input.holderName.length > 0) card.holderName = input.holderName;
  if (cvv !== undefined) card.cvv = cvv;
  return card;
}

/**
 * The expiry rules of a card (PRODUCT.md): month 1-12, four-digit year, not past, at most
 * MAX_YEARS_AHEAD (20) years ahead. For a new card and for a stored card's new expiry (PATCH /v1/token/{token}) alike.
 */
export function validateExpiry(expiryMonth: number, expiryYear: number, now: Date = new Date()): void {
  if (!Number.isInteger(expiryMonth) || expiryMonth < 1 || expiryMonth > 12) {
    throw new TesseraError('parameter_invalid', { param: 'expiryMonth', message: 'expiryMonth must be an integer from 1 to 12.' });
  }
  if (!Number.isInteger(expiryYear) || expiryYear < 1000 || expiryYear > 9999) {
    throw new TesseraError('parameter_invalid', { param: 'expiryYear', message: 'expiryYear must be a four-digit year.' });
  }
  if (isExpired(expiryMonth, expiryYear, now)) {
    throw new TesseraError('card_expired', { param: 'expiryYear' });
  }
  if (isTooFarAhead(expiryYear, now)) {
    throw new TesseraError('parameter_invalid', {
      param: 'expiryYear',
      message: `expiryYear is more than ${MAX_YEARS_AHEAD} years ahead.`,
    });
  }
}

/**
 * The CVV rules for a card of `brand` (see normalizeCvv): the normalised CVV, or cvv_invalid naming
 * the length the brand takes. For a CVV given at tokenization and one re-collected later alike.
 */
export function validateCvv(input: number | string, brand: Brand, testCard: boolean): string {
  const result = normalizeCvv(input, brand, testCard);
  if (result.ok) return result.cvv;
  throw new TesseraError('cvv_invalid', {
    param: 'cvv',
    message:
      brand === 'amex'
        ? 'An amex CVV has 4 digits.'
        : testCard || brand === 'unknown'
          ? 'The CVV must have 3 or 4 digits.'
          : `A ${brand} CVV has 3 digits.`,
  });
}
