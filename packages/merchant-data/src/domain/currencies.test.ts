import { formatAmount, isCurrency, minorUnitExponent } from './currencies';

describe('currencies', () => {
  it('knows ISO 4217 codes in lower case only, and not funds or made-up codes', () => {
    expect(isCurrency('eur')).toBe(true);
    expect(isCurrency('jpy')).toBe(true);
    expect(isCurrency('EUR')).toBe(false);
    expect(isCurrency('xau')).toBe(false);
    expect(isCurrency('abc')).toBe(false);
  });

  it('uses each currency’s minor unit: cents, none for yen, thousandths for dinars', () => {
    expect(minorUnitExponent('eur')).toBe(2);
    expect(minorUnitExponent('jpy')).toBe(0);
    expect(minorUnitExponent('kwd')).toBe(3);
  });

  it.each([
    [1234, 'eur', 'en', '€12.34'],
    [1234, 'eur', 'de', '12,34 €'],
    [1234, 'eur', 'nl', '€ 12,34'],
    [1234, 'usd', 'en', '$12.34'],
    [1234, 'jpy', 'en', '¥1,234'],
    [1234, 'kwd', 'en', 'KWD 1.234'],
    [100000, 'chf', 'fr', '1 000,00 CHF'],
  ] as const)('formats %d %s for %s as %j', (amount, currency, locale, expected) => {
    // Intl separates some parts with no-break spaces; compare what a reader sees.
    expect(formatAmount(amount, currency, locale).replace(/[\u00a0\u202f]/g, ' ')).toBe(expected);
  });
});
