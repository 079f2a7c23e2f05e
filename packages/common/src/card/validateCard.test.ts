import { TesseraError } from '../errors';
import { validateCard, type CardInput } from './validateCard';

const now = new Date('2026-11-23T00:00:00Z');
const aCard = (overrides: Partial<CardInput> = {}): CardInput => ({
  number: '4242424242424242',
  expiryMonth: 12,
  expiryYear: 2030,
  ...overrides,
});

function failure(input: CardInput, mode: 'test' | 'live' = 'test'): { code: string; param?: string; message: string } {
  try {
    validateCard(input, mode, now);
  } catch (err) {
    if (err instanceof TesseraError) return { code: err.code, param: err.param, message: err.message } as never;
    throw err;
  }
  throw new Error('expected validateCard to throw');
}

describe('validateCard', () => {
  it('strips spaces and hyphens and detects the brand', () => {
    const card = validateCard(aCard({ number: '4242 4242-4242 4242', cvv: 42 }), 'test', now);
    expect(card).toEqual({ number: '4242424242424242', brand: 'visa', expiryMonth: 12, expiryYear: 2030, cvv: '042' });
  });

  it('keeps a holder name and drops an empty one', () => {
    expect(validateCard(aCard({ holderName: 'Ada Lovelace' }), 'test', now).holderName).toBe('Ada Lovelace');
    expect(validateCard(aCard({ holderName: '' }), 'test', now)).not.toHaveProperty('holderName');
  });

  it.each([
    ['letters', '4242abcd42424242'],
    ['too short', '42424242424'],
    ['too long', '42424242424242424242'],
    ['a Luhn failure', '4242424242424241'],
    ['a wrong length for the brand', '424242424242424'],
  ])('refuses a number with %s, naming the number param', (_label, number) => {
    expect(failure(aCard({ number }))).toMatchObject({ code: 'card_number_invalid', param: 'number' });
  });

  it('never echoes the submitted number in its message', () => {
    const { message } = failure(aCard({ number: '4242424242424241' }));
    expect(message).not.toContain('4242');
  });

  it('refuses out-of-range months and non-four-digit years', () => {
    expect(failure(aCard({ expiryMonth: 0 }))).toMatchObject({ code: 'parameter_invalid', param: 'expiryMonth' });
    expect(failure(aCard({ expiryMonth: 13 }))).toMatchObject({ code: 'parameter_invalid', param: 'expiryMonth' });
    expect(failure(aCard({ expiryYear: 30 }))).toMatchObject({ code: 'parameter_invalid', param: 'expiryYear' });
  });

  it('refuses expired cards and years more than 20 years ahead', () => {
    expect(failure(aCard({ expiryMonth: 10, expiryYear: 2026 }))).toMatchObject({ code: 'card_expired', param: 'expiryYear' });
    expect(failure(aCard({ expiryYear: 2047 }))).toMatchObject({
      code: 'parameter_invalid',
      param: 'expiryYear',
      message: 'expiryYear is more than 20 years ahead.',
    });
    expect(failure(aCard({ expiryYear: 2077 }))).toMatchObject({ code: 'parameter_invalid', param: 'expiryYear' });
  });

  it('refuses a CVV of the wrong length for a live card', () => {
    expect(failure(aCard({ number: '4111111111111111', cvv: '1234' }), 'live')).toMatchObject({ code: 'cvv_invalid', param: 'cvv' });
  });

  it('keeps test keys to test cards and live keys to real cards', () => {
    expect(failure(aCard({ number: '4111111111111111' }), 'test')).toMatchObject({ code: 'live_card_in_test_mode', param: 'number' });
    expect(failure(aCard(), 'live')).toMatchObject({ code: 'test_card_in_live_mode', param: 'number' });
    expect(validateCard(aCard({ number: '4111111111111111' }), 'live', now).brand).toBe('visa');
  });
});
