import { isOrigin, parseCommand, parseConnect, parseCvcSessionGrant, parseEvent, parseHello, parseRefused } from './protocol';

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

  it('carries a change error with the fields’ message, never one with digits in it', () => {
    const change = { type: 'change', empty: false, complete: false, valid: false, brand: 'amex' };
    const error = { code: 'brand_not_accepted', message: 'This card brand is not accepted here.' };
    expect(parseEvent({ ...change, error })).toEqual({ ...change, error });
    expect(parseEvent({ ...change, error: { code: 'brand_not_accepted', message: 'Not 3782 8224' } })).toBeUndefined();
    expect(parseEvent({ ...change, error: { code: 'brand_not_accepted' } })).toBeUndefined();
  });

  it('accepts a refusal page’s message only with a refusal code, and Enter as a bare submit', () => {
    const refused = { type: 'tessera:refused', v: 1, nonce: NONCE, code: 'origin_not_allowed' };
    expect(parseRefused(refused)).toEqual(refused);
    expect(parseRefused({ ...refused, code: 'card_number_invalid' })).toBeUndefined();
    expect(parseRefused({ ...refused, message: 'x' })).toBeUndefined();
    expect(parseEvent({ type: 'submit' })).toEqual({ type: 'submit' });
    expect(parseEvent({ type: 'submit', value: '4242' })).toBeUndefined();
  });

  it('types a tokenize failure and its wait', () => {
    const failure = {
      type: 'tokenize_failed',
      id: 3,
      error: { code: 'rate_limited', message: 'Too many requests.', type: 'rate_limit_error', retryAfter: 30 },
    };
    expect(parseEvent(failure)).toEqual(failure);
    expect(parseEvent({ ...failure, error: { ...failure.error, type: 'card_error' } })).toBeUndefined();
    expect(parseEvent({ ...failure, error: { ...failure.error, retryAfter: -1 } })).toBeUndefined();
    expect(parseEvent({ ...failure, error: { ...failure.error, number: '4242' } })).toBeUndefined();
  });

  it('checks an update’s options as a connect’s, and accepts only known brands', () => {
    const options = { style: { base: { color: '#fff' } }, holderName: true, acceptedBrands: ['visa', 'mastercard'] };
    expect(parseCommand({ type: 'update', options })).toEqual({ type: 'update', options });
    expect(parseCommand({ type: 'update', options: { ...options, acceptedBrands: ['unknown'] } })).toBeUndefined();
    expect(parseCommand({ type: 'update', options: { ...options, acceptedBrands: [] } })).toBeUndefined();
    expect(parseCommand({ type: 'update', options: { ...options, acceptedBrands: ['visa', 'visa'] } })).toBeUndefined();
    expect(parseCommand({ type: 'update', options: { ...options, style: { base: { color: 'url(x)' } } } })).toBeUndefined();
    // An update cannot smuggle in a CVC session or a nonce.
    expect(parseCommand({ type: 'update', options: { ...options, nonce: NONCE } })).toBeUndefined();
    expect(parseCommand({ type: 'update', options: { ...options, cvcSession: { token: 'tok.x', secret: 'y' } } })).toBeUndefined();
    const connect = { type: 'tessera:connect', v: 1, nonce: NONCE, style: {}, holderName: false };
    expect(parseConnect({ ...connect, acceptedBrands: ['amex'] })?.acceptedBrands).toEqual(['amex']);
    expect(parseConnect({ ...connect, acceptedBrands: 'amex' })).toBeUndefined();
  });

  it('knows an origin from a URL', () => {
    expect(isOrigin('https://shop.example:8443')).toBe(true);
    expect(isOrigin('http://127.0.0.1:3000')).toBe(true);
    expect(isOrigin('https://shop.example/path')).toBe(false);
    expect(isOrigin('null')).toBe(false);
    expect(isOrigin('https://user@shop.example')).toBe(false);
  });
});
