import { cvvLengthForBrand, detectBrand, isValidLengthForBrand } from './brands';

describe('detectBrand', () => {
  it.each([
    ['4242424242424242', 'visa'],
    ['5555555555554444', 'mastercard'],
    ['2221000000000009', 'mastercard'],
    ['2720990000000007', 'mastercard'],
    ['378282246310005', 'amex'],
    ['341111111111111', 'amex'],
    ['6011111111111117', 'discover'],
    ['6445644564456445', 'discover'],
    ['6500000000000002', 'discover'],
    ['6221260000000000', 'discover'],
    ['30569309025904', 'diners'],
    ['36227206271667', 'diners'],
    ['3530111333300000', 'jcb'],
    ['3589000000000000', 'jcb'],
    ['6200000000000005', 'unionpay'],
    ['6304000000000000', 'maestro'],
    ['5018000000000009', 'maestro'],
    ['6759649826438453', 'maestro'],
  ])('classifies %s as %s', (number, brand) => expect(detectBrand(number)).toBe(brand));

  it('falls back to unknown when no range matches', () => {
    expect(detectBrand('9999999999999995')).toBe('unknown');
    expect(detectBrand('2220990000000000')).toBe('unknown');
    expect(detectBrand('2721000000000000')).toBe('unknown');
  });
});

describe('isValidLengthForBrand', () => {
  it('knows the lengths each brand issues', () => {
    expect(isValidLengthForBrand('amex', 15)).toBe(true);
    expect(isValidLengthForBrand('amex', 16)).toBe(false);
    expect(isValidLengthForBrand('visa', 13)).toBe(true);
    expect(isValidLengthForBrand('visa', 15)).toBe(false);
    expect(isValidLengthForBrand('mastercard', 16)).toBe(true);
    expect(isValidLengthForBrand('mastercard', 19)).toBe(false);
    expect(isValidLengthForBrand('maestro', 12)).toBe(true);
    expect(isValidLengthForBrand('unknown', 12)).toBe(true);
    expect(isValidLengthForBrand('unknown', 11)).toBe(false);
    expect(isValidLengthForBrand('unknown', 20)).toBe(false);
  });
});

describe('cvvLengthForBrand', () => {
  it('is 4 for amex and 3 for every other brand', () => {
    expect(cvvLengthForBrand('amex')).toBe(4);
    expect(cvvLengthForBrand('visa')).toBe(3);
    expect(cvvLengthForBrand('unionpay')).toBe(3);
  });
});
