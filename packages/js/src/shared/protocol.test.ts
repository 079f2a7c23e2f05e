import { isOrigin, parseConnect, parseEvent, parseHello } from './protocol';

const NONCE = 'abcdefghijklmnopqrstuvwx';

describe('message schemas', () => {
  it('accepts a hello and a connect with exactly their fields', () => {
    expect(parseHello({ type: 'tessera:hello', v: 1, nonce: NONCE })).toEqual({ type: 'tessera:hello', v: 1, nonce: NONCE });
    expect(parseHello({ type: 'tessera:hello', v: 1, nonce: NONCE, extra: 1 })).toBeUndefined();
    expect(parseConnect({ type: 'tessera:connect', v: 1, nonce: NONCE, style: {}, holderName: false })).toMatchObject({ nonce: NONCE });
  });

  it('refuses a connect whose style loads a resource', () => {
    expect(
      parseConnect({ type: 'tessera:connect', v: 1, nonce: NONCE, style: { base: { color: 'url(x)' } }, holderName: false }),
    ).toBeUndefined();
  });

  it('lets through a change event but nothing that could carry card data', () => {
    expect(parseEvent({ type: 'change', empty: false, complete: false, valid: true, brand: 'visa' })).toEqual({
      type: 'change',
      empty: false,
      complete: false,
      valid: true,
      brand: 'visa',
    });
    expect(parseEvent({ type: 'change', empty: false, complete: false, valid: true, brand: 'visa', number: '4242' })).toBeUndefined();
    expect(
      parseEvent({
        type: 'change',
        empty: false,
        complete: false,
        valid: false,
        brand: 'visa',
        error: { code: 'invalid_number', value: '4242' },
      }),
    ).toBeUndefined();
    expect(parseEvent({ type: 'card', number: '4242424242424242' })).toBeUndefined();
  });

  it('accepts a tokenize result only with a token and the card summary', () => {
    const result = { token: 'tok.AAAAAAAAAAAAAAAAAAAAAA', card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2030 } };
    expect(parseEvent({ type: 'tokenized', id: 1, result })).toEqual({ type: 'tokenized', id: 1, result });
    expect(
      parseEvent({ type: 'tokenized', id: 1, result: { ...result, card: { ...result.card, number: '4242424242424242' } } }),
    ).toBeUndefined();
    expect(parseEvent({ type: 'tokenized', id: 1, result: { ...result, card: { ...result.card, last4: '424242' } } })).toBeUndefined();
  });

  it('knows an origin from a URL', () => {
    expect(isOrigin('https://shop.example:8443')).toBe(true);
    expect(isOrigin('http://127.0.0.1:3000')).toBe(true);
    expect(isOrigin('https://shop.example/path')).toBe(false);
    expect(isOrigin('null')).toBe(false);
    expect(isOrigin('https://user@shop.example')).toBe(false);
  });
});
