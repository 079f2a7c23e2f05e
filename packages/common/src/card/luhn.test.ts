import { isLuhnValid } from './luhn';

describe('isLuhnValid', () => {
  it.each(['4242424242424242', '5555555555554444', '378282246310005', '4000000000000002', '79927398713'])(
    'accepts the valid number %s',
    (n) => expect(isLuhnValid(n)).toBe(true),
  );

  it.each(['4242424242424241', '5555555555554445', '79927398710', '1234567812345678'])('rejects the invalid number %s', (n) =>
    expect(isLuhnValid(n)).toBe(false),
  );

  it('rejects anything that is not only digits', () => {
    expect(isLuhnValid('4242 4242 4242 4242')).toBe(false);
    expect(isLuhnValid('')).toBe(false);
    expect(isLuhnValid('42424242424242a2')).toBe(false);
  });
});
