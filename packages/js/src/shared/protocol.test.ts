import { isOrigin, parseConnect, parseCvcSessionGrant, parseEvent, parseHello } from './protocol';

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

  it('carries a CVC session into the frame only as its token and secret', () => {
    const grant = { token: 'tok.AAAAAAAAAAAAAAAAAAAAAA', secret: `cvcs_${'A'.repeat(43)}` };
    const connect = { type: 'tessera:connect', v: 1, nonce: NONCE, style: {}, holderName: false };
    expect(parseConnect({ ...connect, cvcSession: grant })?.cvcSession).toEqual(grant);
    // The whole answer of POST /v1/token/{token}/cvc-sessions works; its other fields stay behind.
    expect(parseCvcSessionGrant({ object: 'cvc_session', ...grant, expiresAt: '2030-01-01T00:00:00Z' })).toEqual(grant);
    expect(parseConnect({ ...connect, cvcSession: { token: grant.token } })).toBeUndefined();
    expect(parseConnect({ ...connect, cvcSession: grant.token })).toBeUndefined();
    expect(parseConnect({ ...connect, cvcToken: grant.token })).toBeUndefined();
  });

  it('accepts a CVC result with the token alone: no card metadata reaches the page', () => {
    const token = 'tok.AAAAAAAAAAAAAAAAAAAAAA';
    expect(parseEvent({ type: 'cvc_attached', id: 2, result: { token } })).toEqual({ type: 'cvc_attached', id: 2, result: { token } });
    expect(parseEvent({ type: 'cvc_attached', id: 2, result: { token, last4: '4242' } })).toBeUndefined();
    expect(parseEvent({ type: 'cvc_attached', id: 2, result: { token, bin: '424242' } })).toBeUndefined();
    expect(
      parseEvent({
        type: 'tokenized',
        id: 1,
        result: { token, card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2030, bin: '424242' } },
      }),
    ).toBeUndefined();
  });

  it('knows an origin from a URL', () => {
    expect(isOrigin('https://shop.example:8443')).toBe(true);
    expect(isOrigin('http://127.0.0.1:3000')).toBe(true);
    expect(isOrigin('https://shop.example/path')).toBe(false);
    expect(isOrigin('null')).toBe(false);
    expect(isOrigin('https://user@shop.example')).toBe(false);
  });
});
