import { isEqual } from './isEqual';

describe('isEqual (option changes)', () => {
  it('takes a new object with the same values as no change', () => {
    expect(
      isEqual(
        { title: 'Card', style: { base: { color: '#111' } }, acceptedBrands: ['visa'] },
        { title: 'Card', style: { base: { color: '#111' } }, acceptedBrands: ['visa'] },
      ),
    ).toBe(true);
    expect(isEqual({ title: 'Card', holderName: undefined }, { title: 'Card' })).toBe(true);
  });

  it('sees a changed value at any depth, a changed list and an array against an object', () => {
    expect(isEqual({ style: { base: { color: '#111' } } }, { style: { base: { color: '#222' } } })).toBe(false);
    expect(isEqual({ acceptedBrands: ['visa'] }, { acceptedBrands: ['visa', 'amex'] })).toBe(false);
    expect(isEqual({ a: [] }, { a: {} })).toBe(false);
    expect(isEqual({ holderName: false }, {})).toBe(false);
    expect(isEqual(null, {})).toBe(false);
  });
});
