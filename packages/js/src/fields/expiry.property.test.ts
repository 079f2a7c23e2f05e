/**
 * Issue 26, item 1: the expiry field reads every way people type a date. For every month, a year
 * as YY or YYYY, every separator people use (or none) and a month with or without its leading
 * zero, the field shows `MM / YY` and the date is complete, with the month and year typed.
 */
import fc from 'fast-check';
import { checkExpiry, formatExpiry } from './cardState';

const NOW = new Date('2026-11-23T12:00:00Z');
const SEPARATORS = ['/', ' / ', ' ', '-', '', ' /', '/ ', ' - '] as const;

const typedDate = fc.record({
  month: fc.integer({ min: 1, max: 12 }),
  // Not expired on NOW, and within the 20 years ahead the API takes.
  year: fc.integer({ min: 2027, max: 2046 }),
  fourDigitYear: fc.boolean(),
  leadingZero: fc.boolean(),
  separator: fc.constantFrom(...SEPARATORS),
});

/**
 * With no separator and no leading zero, "1" then a year starting 0-2 reads as month 10, 11 or
 * 12 ("127" is December and a year still being typed): the shopper cannot have meant otherwise
 * in a way the field could know, so those are left out; every other way must read right.
 */
const ambiguous = (t: { month: number; separator: string; leadingZero: boolean }, yearText: string): boolean =>
  t.separator === '' && !t.leadingZero && t.month === 1 && /^[0-2]/.test(yearText);

describe('the expiry as people type it (property)', () => {
  it('reads MM / YY and is complete for every month, year form and separator', () => {
    fc.assert(
      fc.property(typedDate, (t) => {
        const monthText = t.leadingZero || t.month >= 10 ? String(t.month).padStart(2, '0') : String(t.month);
        const yearText = t.fourDigitYear ? String(t.year) : String(t.year).slice(2);
        fc.pre(!ambiguous(t, yearText));
        const typed = `${monthText}${t.separator}${yearText}`;
        const expected = `${String(t.month).padStart(2, '0')} / ${String(t.year).slice(2)}`;
        expect({ typed, shown: formatExpiry(typed) }).toEqual({ typed, shown: expected });
        expect(checkExpiry(typed, NOW)).toMatchObject({ complete: true, value: { month: t.month, year: t.year } });
        // What the field shows reads the same once more (the input formats on every keystroke).
        expect(formatExpiry(expected)).toBe(expected);
        expect(checkExpiry(expected, NOW)).toMatchObject({ complete: true, value: { month: t.month, year: t.year } });
      }),
      { numRuns: 2000 },
    );
  });

  it('reads the same whether typed at once or one character at a time, as the field reformats', () => {
    fc.assert(
      fc.property(typedDate, (t) => {
        const monthText = t.leadingZero || t.month >= 10 ? String(t.month).padStart(2, '0') : String(t.month);
        const yearText = t.fourDigitYear ? String(t.year) : String(t.year).slice(2);
        fc.pre(!ambiguous(t, yearText));
        let value = '';
        for (const char of `${monthText}${t.separator}${yearText}`) value = formatExpiry(value + char);
        expect(value).toBe(`${String(t.month).padStart(2, '0')} / ${String(t.year).slice(2)}`);
      }),
      { numRuns: 2000 },
    );
  });
});
