import { isLuhnValid } from './luhn';

/** 13+ digits in a row, or four-digit groups joined by one repeated separator ("4242-4242-4242-4242"). */
const DIGIT_RUN = /\d{13,}/g;
const GROUPED = /(?<!\d)\d{4}([ .-])\d{4}\1\d{4}\1\d{1,7}(?!\d)/g;

/** A run of 13-19 digits is checked whole; a longer one could hide a card number anywhere in it. */
function holdsCardNumber(digits: string): boolean {
  if (digits.length <= 19) return isLuhnValid(digits);
  for (let length = 13; length <= 19; length++) {
    for (let start = 0; start + length <= digits.length; start++) {
      if (isLuhnValid(digits.slice(start, start + length))) return true;
    }
  }
  return false;
}

/**
 * Whether free text a client chose (a request id, say) could hold a card number: 13 to 19 digits
 * that pass the Luhn check, written in one run or in groups of four. Such text is never echoed or
 * logged. A run of digits that fails Luhn (a timestamp, an order number) is left alone.
 */
export function mayHoldCardNumber(text: string): boolean {
  for (const match of text.matchAll(DIGIT_RUN)) if (holdsCardNumber(match[0])) return true;
  for (const match of text.matchAll(GROUPED)) if (holdsCardNumber(match[0].replace(/\D/g, ''))) return true;
  return false;
}
