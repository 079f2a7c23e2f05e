import { TesseraError } from '@tessera/common';
import { checkCardToTokenize, describeCard, provisionalTtlSecondsOf, retentionFor } from './card';
import { aCard } from '../test/builders';

function rejection(fn: () => void): { code: string; param?: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof TesseraError) return { code: err.code, param: err.param, message: err.message };
    throw err;
  }
  throw new Error('expected a TesseraError');
}

describe('checkCardToTokenize (defense in depth)', () => {
  it('accepts a well-formed card with and without cvv and holder name', () => {
    expect(() => checkCardToTokenize(aCard())).not.toThrow();
    expect(() => checkCardToTokenize(aCard({ cvv: '', holderName: '' }))).not.toThrow();
    expect(() => checkCardToTokenize(aCard({ number: '378282246310005', cvv: '1234' }))).not.toThrow();
  });

  it.each([
    ['non-digits', '4242 4242 4242 4242'],
    ['11 digits', '42424242424'],
    ['20 digits', '42424242424242424242'],
    ['a Luhn failure', '4242424242424241'],
  ])('refuses a number with %s as card_number_invalid without echoing it', (_name, number) => {
    const err = rejection(() => checkCardToTokenize(aCard({ number })));
    expect(err).toMatchObject({ code: 'card_number_invalid', param: 'number' });
    expect(err.message).not.toContain(number);
  });

  it.each([0, 13, 1.5])('refuses expiry month %p', (expiryMonth) => {
    expect(rejection(() => checkCardToTokenize(aCard({ expiryMonth })))).toMatchObject({ code: 'parameter_invalid', param: 'expiryMonth' });
  });

  it.each([27, 999, 10000])('refuses a year that is not four digits (%p)', (expiryYear) => {
    expect(rejection(() => checkCardToTokenize(aCard({ expiryYear })))).toMatchObject({ code: 'parameter_invalid', param: 'expiryYear' });
  });

  it.each(['12', '12345', '12a'])('refuses cvv %p', (cvv) => {
    expect(rejection(() => checkCardToTokenize(aCard({ cvv })))).toMatchObject({ code: 'parameter_invalid', param: 'cvv' });
  });

  it('refuses an empty merchant id', () => {
    expect(rejection(() => checkCardToTokenize(aCard({ merchantId: '' })))).toMatchObject({ code: 'parameter_invalid' });
  });

  it('returns the key mode the token will belong to', () => {
    expect(checkCardToTokenize(aCard({ number: '4242424242424242', mode: 'test' }))).toBe('test');
    expect(checkCardToTokenize(aCard({ number: '4111111111111111', mode: 'live' }))).toBe('live');
  });

  it.each(['', 'LIVE', 'prod'])('refuses the mode %p rather than guessing one (an older gateway sends "")', (mode) => {
    expect(rejection(() => checkCardToTokenize(aCard({ mode })))).toMatchObject({ code: 'parameter_invalid', param: 'mode' });
  });

  it('holds cards to the mode as the gateway does: test cards only in test, never in live', () => {
    expect(rejection(() => checkCardToTokenize(aCard({ number: '4242424242424242', mode: 'live' })))).toMatchObject({
      code: 'test_card_in_live_mode',
      param: 'number',
    });
    expect(rejection(() => checkCardToTokenize(aCard({ number: '4111111111111111', mode: 'test' })))).toMatchObject({
      code: 'live_card_in_test_mode',
      param: 'number',
    });
  });
});

describe('retentionFor', () => {
  const now = new Date('2025-01-15T00:00:00Z');

  it('keeps the card until its expiry month has ended everywhere plus the grace days', () => {
    const r = retentionFor(12, 2026, { cardGraceDays: 30, cvvTtlSeconds: 3600, now });
    // 2027-01-01 00:00 in UTC-12 is 12:00 UTC; plus 30 days.
    expect(r.expiresAt.toISOString()).toBe('2027-01-31T12:00:00.000Z');
    expect(r.cardTtlMs).toBe(r.expiresAt.getTime() - now.getTime());
    expect(r.cvvTtlMs).toBe(3_600_000);
  });

  it('never gives a TTL below one second, and the CVV never outlives the card', () => {
    const r = retentionFor(1, 2020, { cardGraceDays: 0, cvvTtlSeconds: 3600, now });
    expect(r.cardTtlMs).toBe(1000);
    expect(r.cvvTtlMs).toBe(1000);
  });
});

describe('describeCard', () => {
  it('keeps only non-sensitive metadata in clear', () => {
    const sealed = { keyId: 'k', iv: 'i', ciphertext: 'c', tag: 't' };
    const stored = describeCard(
      aCard({ number: '5555555555554444', holderName: 'Grace Hopper' }),
      'test',
      sealed,
      new Date(0),
      new Date(1000),
    );
    expect(stored).toMatchObject({
      mode: 'test',
      last4: '4444',
      brand: 'mastercard',
      holderNameAvailable: true,
      createdAt: '1970-01-01T00:00:01.000Z',
    });
    const text = JSON.stringify(stored);
    expect(text).not.toContain('555555555555');
    expect(text).not.toContain('Grace');
    expect(text).not.toContain('123');
  });
});

describe('provisionalTtlSecondsOf', () => {
  it("takes a caller's shorter life for a provisional token (made under card-testing attack), never a longer one", () => {
    expect(provisionalTtlSecondsOf({}, 3600)).toBe(3600);
    expect(provisionalTtlSecondsOf({ provisionalTtlSeconds: 0 }, 3600)).toBe(3600);
    expect(provisionalTtlSecondsOf({ provisionalTtlSeconds: 300 }, 3600)).toBe(300);
    expect(provisionalTtlSecondsOf({ provisionalTtlSeconds: 86_400 }, 3600)).toBe(3600);
  });
});
