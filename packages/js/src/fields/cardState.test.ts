import { changePayload, checkAll, checkCvc, checkExpiry, checkNumber, formatCardNumber, formatExpiry } from './cardState';

const NOW = new Date('2026-11-23T12:00:00Z');

describe('card number as typed', () => {
  it.each([
    ['4', 'visa'],
    ['5', 'unknown'],
    ['51', 'mastercard'],
    ['2221', 'mastercard'],
    ['34', 'amex'],
    ['37', 'amex'],
    ['6011', 'discover'],
  ])('detects the brand from %s', (digits, brand) => {
    expect(checkNumber(digits).brand).toBe(brand);
  });

  it('is complete only at a length of its brand with a valid Luhn digit', () => {
    expect(checkNumber('4242 4242 4242 4242')).toMatchObject({ complete: true });
    expect(checkNumber('4242 4242 4242 4241')).toMatchObject({ complete: false, error: 'invalid_number' });
    expect(checkNumber('4242 4242 42')).toMatchObject({ complete: false, error: 'incomplete_number' });
    expect(checkNumber('3782 822463 10005')).toMatchObject({ complete: true, brand: 'amex' });
  });

  it('groups digits as printed on the card and stops at the brand’s longest number', () => {
    expect(formatCardNumber('4242424242424242')).toBe('4242 4242 4242 4242');
    expect(formatCardNumber('378282246310005')).toBe('3782 822463 10005');
    expect(formatCardNumber('3782822463100059999')).toBe('3782 822463 10005');
  });
});

describe('expiry and CVC', () => {
  it('reads MM / YY and refuses past or impossible dates', () => {
    expect(formatExpiry('1230')).toBe('12 / 30');
    expect(formatExpiry('4')).toBe('04');
    // January typed without its leading zero, as shoppers do (issue 26): with a separator, or as 13…
    for (const typed of ['1/30', '1 / 30', '1 30', '1-30', '130'])
      expect({ typed, shown: formatExpiry(typed) }).toEqual({ typed, shown: '01 / 30' });
    expect(formatExpiry('13')).toBe('01 / 3');
    expect(formatExpiry('1/')).toBe('01');
    // ... but 10, 11 and 12 are months, and the field's own "01 / 30" is left as it is.
    for (const typed of ['10', '11', '12', '1', '01 / 30', '12 / 30']) expect(formatExpiry(typed)).toBe(typed);
    expect(checkExpiry('1/30', NOW)).toMatchObject({ complete: true, value: { month: 1, year: 2030 } });
    expect(checkExpiry('130', NOW)).toMatchObject({ complete: true, value: { month: 1, year: 2030 } });
    expect(checkExpiry('12 / 30', NOW)).toMatchObject({ complete: true, value: { month: 12, year: 2030 } });
    expect(checkExpiry('11 / 26', NOW)).toMatchObject({ complete: true });
    expect(checkExpiry('10 / 26', NOW)).toMatchObject({ error: 'expired_card' });
    expect(checkExpiry('13 / 30', NOW)).toMatchObject({ error: 'invalid_expiry' });
    expect(checkExpiry('12 / 3', NOW)).toMatchObject({ error: 'incomplete_expiry' });
  });

  it('wants four CVC digits for Amex and three for others', () => {
    expect(checkCvc('123', 'visa')).toMatchObject({ complete: true });
    expect(checkCvc('1234', 'visa')).toMatchObject({ error: 'invalid_cvc' });
    expect(checkCvc('123', 'amex')).toMatchObject({ error: 'incomplete_cvc' });
    expect(checkCvc('1234', 'amex')).toMatchObject({ complete: true });
  });
});

describe('change payload', () => {
  const values = { number: '4242 4242 4242 4241', expiry: '12 / 30', cvc: '123', name: '' };

  it('reports an error only for a field the shopper has left', () => {
    const checks = checkAll(values, NOW);
    expect(changePayload(checks, values, new Set())).toEqual({ empty: false, complete: false, valid: true, brand: 'visa' });
    expect(changePayload(checks, values, new Set(['number']))).toEqual({
      empty: false,
      complete: false,
      valid: false,
      brand: 'visa',
      error: { code: 'invalid_number', message: 'Your card number is invalid.' },
    });
  });
});
