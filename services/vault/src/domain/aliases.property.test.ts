import fc from 'fast-check';
import { detectBrand, isLuhnValid, isValidLengthForBrand } from '@tessera/common';
import { drawAlias, fitsFormat, isAliasShaped } from './aliases';

/** `body` completed with the check digit that makes it Luhn-valid. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (isLuhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

/** Any Luhn-valid card number of 12-19 digits (the lengths the vault accepts). */
const cardNumber = fc
  .integer({ min: 12, max: 19 })
  .chain((length) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: length - 1, maxLength: length - 1 }))
  .map(withCheckDigit);

describe('alias draws (properties)', () => {
  it('card_bin_last4: only digits, the card length, Luhn-valid, first 6 and last 4 kept, never the card itself', () => {
    fc.assert(
      fc.property(cardNumber, (number) => {
        const alias = drawAlias('card_bin_last4', number);
        expect(alias).toMatch(/^\d+$/);
        expect(alias).toHaveLength(number.length);
        expect(isLuhnValid(alias)).toBe(true);
        expect(alias.slice(0, 6)).toBe(number.slice(0, 6));
        expect(alias.slice(-4)).toBe(number.slice(-4));
        expect(alias).not.toBe(number);
        expect(fitsFormat('card_bin_last4', alias, number)).toBe(true);
        expect(isAliasShaped(alias)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('card_last4: only digits, the card length, Luhn-valid, last 4 kept, no leading 0, never the card itself', () => {
    fc.assert(
      fc.property(cardNumber, (number) => {
        const alias = drawAlias('card_last4', number);
        expect(alias).toMatch(/^[1-9]\d+$/);
        // A card whose length fits its brand gets an alias whose length fits the brand its digits name.
        const fitsBrand = (digits: string) => isValidLengthForBrand(detectBrand(digits), digits.length);
        if (fitsBrand(number)) expect(fitsBrand(alias)).toBe(true);
        expect(alias).toHaveLength(number.length);
        expect(isLuhnValid(alias)).toBe(true);
        expect(alias.slice(-4)).toBe(number.slice(-4));
        expect(alias).not.toBe(number);
        expect(fitsFormat('card_last4', alias, number)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('uuid: an RFC 4122 version 4 UUID, whatever the card', () => {
    fc.assert(
      fc.property(cardNumber, (number) => {
        const alias = drawAlias('uuid', number);
        expect(alias).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(fitsFormat('uuid', alias, number)).toBe(true);
        expect(isAliasShaped(alias)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('alias draws', () => {
  it('randomize every middle digit of a card_bin_last4 alias (each position takes many values)', () => {
    const number = '4242424242424242';
    const seen = Array.from({ length: 6 }, () => new Set<string>());
    for (let i = 0; i < 2000; i++) {
      const middle = drawAlias('card_bin_last4', number).slice(6, 12);
      [...middle].forEach((d, p) => seen[p]!.add(d));
    }
    for (const digits of seen) expect(digits.size).toBe(10);
  });

  it('avoid the card itself even when the card leaves few other choices (a 12-digit card keeps 2 random digits, one fixed by Luhn)', () => {
    const number = '500000000009';
    const aliases = new Set(Array.from({ length: 500 }, () => drawAlias('card_bin_last4', number)));
    expect(aliases.has(number)).toBe(false);
    expect(aliases.size).toBeGreaterThan(1);
  });

  it('tell shapes apart: tokens and odd text are not alias-shaped', () => {
    expect(isAliasShaped('tok.abcdefghijklmnopqrstuvwxyz')).toBe(false);
    expect(isAliasShaped('12345678901')).toBe(false);
    // A published test card is always a card: never drawn as an alias, never looked up as one.
    expect(isAliasShaped('4242424242424242')).toBe(false);
    expect(isAliasShaped('4242424242424241')).toBe(true);
    expect(isAliasShaped('12345678901234567890')).toBe(false);
    expect(isAliasShaped('550e8400-e29b-11d4-a716-446655440000')).toBe(false);
    expect(isAliasShaped('550E8400-E29B-41D4-A716-446655440000')).toBe(false);
  });
});
