import { withAcceptedBrands } from './acceptedBrands';
import { changePayload, checkAll } from './cardState';

const NOW = new Date('2026-11-23T12:00:00Z');
const values = (number: string) => ({ number, expiry: '12 / 30', cvc: '1234', name: '' });

describe('accepted brands', () => {
  it('refuses a card of a brand the merchant left out, as soon as the brand is known', () => {
    const amex = withAcceptedBrands(checkAll(values('3782 822463 10005'), NOW), ['visa', 'mastercard']);
    expect(amex.number).toMatchObject({ complete: false, error: 'brand_not_accepted' });
    expect(changePayload(amex, values('3782 822463 10005'), new Set(['number']))).toMatchObject({
      complete: false,
      valid: false,
      brand: 'amex',
      error: { code: 'brand_not_accepted', message: expect.stringContaining('not accepted') },
    });
    expect(withAcceptedBrands(checkAll(values('37'), NOW), ['visa']).number.error).toBe('brand_not_accepted');
  });

  it('leaves an accepted brand, an unknown one (not typed far enough) and no list at all alone', () => {
    const visa = checkAll(values('4242 4242 4242 4242'), NOW);
    expect(withAcceptedBrands(visa, ['visa'])).toBe(visa);
    expect(withAcceptedBrands(visa, undefined)).toBe(visa);
    const unknown = checkAll(values('9'), NOW);
    expect(withAcceptedBrands(unknown, ['visa'])).toBe(unknown);
  });
});
