import { mayHoldCardNumber } from './cardNumberLike';

describe('mayHoldCardNumber', () => {
  it.each([
    '4242424242424242',
    'req-4242424242424242',
    'x5555555555554444y',
    '4242-4242-4242-4242',
    '4242.4242.4242.4242',
    '378282246310005',
  ])('flags %s', (text) => expect(mayHoldCardNumber(text)).toBe(true));

  it.each([
    'req_7f3a9c',
    '550e8400-e29b-41d4-a716-446655440000',
    '12345678-1234-1234-1234-123456789012',
    'order-1700000000001',
    '4242424242424241',
    '4242-4242.4242-4242',
    '424242424242',
  ])('leaves %s alone', (text) => expect(mayHoldCardNumber(text)).toBe(false));
});
