/**
 * The card-number inputs of the echo and fuzz tests, shared so every test that scans for card
 * numbers (cardNumberEcho, restFuzz, requestLog) sends the same shapes and judges with the same rule.
 */
import fc from 'fast-check';
import { mayHoldCardNumber } from '@tessera/common';
import { TEST_CARDS } from './harness';

/**
 * The shapes the red-team reviews found missed: `_`, mixed separators, Amex 4-6-5, 12-digit Maestro
 * (issue 11); runs of two or three separators between groups (issue 22); and a plain PAN. Each is
 * valid anywhere a caller may put it: a host name, a URL path, an HTTP header name.
 */
export const SHAPES = [
  '4242_4242_4242_4242',
  '4242-4242.4242-4242',
  '3782-822463-10005',
  '500000000009',
  '4242-4242--4242-4242',
  '4242_-_4242_-_4242_-_4242',
  '4242424242424242',
];

/**
 * Issue 22's shapes with spaces and commas between groups: no host, path or header name can hold
 * them, so they go where a caller types free text (a body template, a header value, a request id,
 * an Idempotency-Key, a token, a field name).
 */
export const SPACED_SHAPES = ['4242  4242  4242  4242', '4242, 4242, 4242, 4242', '4242 - 4242 - 4242 - 4242'];
const DIGITS = [...new Set([...SHAPES, ...SPACED_SHAPES].map((s) => s.replace(/\D/g, '')))];

/** Every place a shape (as sent, or as its bare digits) or anything card-number-like shows up in `text`. */
export function cardNumbersIn(text: string): string[] {
  const found = [...SHAPES, ...SPACED_SHAPES, ...DIGITS].filter((s) => text.includes(s));
  if (mayHoldCardNumber(text)) found.push('card-number-like text');
  return found;
}

/** Issue 11, finding 4: the shapes the first detector missed. */
export const CARD_SHAPES = ['4242_4242_4242_4242', '4242-4242.4242-4242', '3782-822463-10005', '500000000009'];
const SEPARATORS = ['_', '-', '.', ' ', '/', ':', '', '  ', ', ', ' - ', '--'];
const PANS = Object.values(TEST_CARDS);

/** A test card (or the 12-digit Maestro) cut as 4-4-4-4(-3) or Amex 4-6-5, each cut joined by any separator. */
export const cardShape = fc.oneof(
  fc.constantFrom(...CARD_SHAPES),
  fc
    .tuple(fc.constantFrom(...PANS, '500000000009'), fc.array(fc.constantFrom(...SEPARATORS), { minLength: 4, maxLength: 4 }), fc.boolean())
    .map(([pan, separators, amexGrouping]) => {
      const cuts = (amexGrouping && pan.length === 15 ? [4, 10] : [4, 8, 12, 16]).filter((cut) => cut < pan.length);
      let out = '';
      let from = 0;
      cuts.forEach((cut, i) => {
        out += pan.slice(from, cut) + (separators[i] ?? '');
        from = cut;
      });
      return out + pan.slice(from);
    }),
);
