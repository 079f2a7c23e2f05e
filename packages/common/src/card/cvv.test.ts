import { normalizeCvv } from './cvv';

describe('normalizeCvv', () => {
  it('left-pads an integer to the brand length, since JSON numbers lose leading zeros', () => {
    expect(normalizeCvv(12, 'visa')).toEqual({ ok: true, cvv: '012' });
    expect(normalizeCvv(7, 'mastercard')).toEqual({ ok: true, cvv: '007' });
    expect(normalizeCvv(123, 'amex')).toEqual({ ok: true, cvv: '0123' });
    expect(normalizeCvv(0, 'visa')).toEqual({ ok: true, cvv: '000' });
  });

  it('keeps an integer that already has the brand length', () => {
    expect(normalizeCvv(123, 'visa')).toEqual({ ok: true, cvv: '123' });
    expect(normalizeCvv(1234, 'amex')).toEqual({ ok: true, cvv: '1234' });
  });

  it('refuses integers longer than the brand allows, negatives and fractions', () => {
    expect(normalizeCvv(1234, 'visa')).toEqual({ ok: false });
    expect(normalizeCvv(12345, 'amex')).toEqual({ ok: false });
    expect(normalizeCvv(-1, 'visa')).toEqual({ ok: false });
    expect(normalizeCvv(12.5, 'visa')).toEqual({ ok: false });
  });

  it('requires strings to have exactly the brand length', () => {
    expect(normalizeCvv('012', 'visa')).toEqual({ ok: true, cvv: '012' });
    expect(normalizeCvv('0123', 'visa')).toEqual({ ok: false });
    expect(normalizeCvv('123', 'amex')).toEqual({ ok: false });
    expect(normalizeCvv('12a', 'visa')).toEqual({ ok: false });
    expect(normalizeCvv('', 'visa')).toEqual({ ok: false });
  });

  it('accepts any 3-4 digit CVV for test cards', () => {
    expect(normalizeCvv('1234', 'visa', true)).toEqual({ ok: true, cvv: '1234' });
    expect(normalizeCvv('123', 'amex', true)).toEqual({ ok: true, cvv: '123' });
    expect(normalizeCvv(12345, 'visa', true)).toEqual({ ok: false });
  });
});
