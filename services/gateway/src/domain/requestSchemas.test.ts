import { TesseraError } from '@tessera/common';
import { parseCardInput, parseProxyRequest } from './requestSchemas';

function cardBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    number: '4242424242424242',
    holderName: 'Ada Lovelace',
    expiryMonth: 12,
    expiryYear: 2035,
    cvv: '123',
    ...overrides,
  };
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
  return body;
}

function proxyBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    method: 'post',
    token: 'tok.abc',
    pspUrl: 'https://psp.example/charges',
    pspHeaders: { 'content-type': 'application/json', authorization: 'Bearer x' },
    pspBody: '{"n":"[CARD_NUMBER]"}',
    ...overrides,
  };
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
  return body;
}

function errorOf(fn: () => unknown): { code: string; param?: string; message: string; status: number } {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof TesseraError)) throw err;
    return { code: err.code, param: err.param, message: err.message, status: err.status };
  }
  throw new Error('expected a TesseraError');
}

describe('card input validation', () => {
  it('accepts a full card input and one with only the required fields', () => {
    expect(parseCardInput(cardBody())).toEqual(cardBody());
    expect(parseCardInput(cardBody({ holderName: undefined, cvv: undefined }))).toEqual({
      number: '4242424242424242',
      expiryMonth: 12,
      expiryYear: 2035,
    });
  });

  it('accepts cvv as an integer or as a string', () => {
    expect(parseCardInput(cardBody({ cvv: 123 })).cvv).toBe(123);
    expect(parseCardInput(cardBody({ cvv: '0123' })).cvv).toBe('0123');
  });

  it.each(['number', 'expiryMonth', 'expiryYear'])('reports a missing %s as parameter_missing with that param', (field) => {
    expect(errorOf(() => parseCardInput(cardBody({ [field]: undefined })))).toMatchObject({
      code: 'parameter_missing',
      param: field,
      status: 400,
    });
  });

  it.each([
    ['number', 4242424242424242],
    ['number', null],
    ['holderName', 42],
    ['holderName', ''],
    ['holderName', 'x'.repeat(201)],
    ['expiryMonth', '12'],
    ['expiryMonth', 12.5],
    ['expiryYear', '2035'],
    ['expiryYear', null],
    ['cvv', true],
    ['cvv', 12.5],
    ['cvv', { value: 123 }],
  ])('reports %s = %j as parameter_invalid with that param', (field, value) => {
    expect(errorOf(() => parseCardInput(cardBody({ [field]: value })))).toMatchObject({
      code: 'parameter_invalid',
      param: field,
      status: 400,
    });
  });

  it('reports an unknown field as parameter_unknown naming the field, ahead of other problems', () => {
    expect(errorOf(() => parseCardInput({ cardNumber: '4242424242424242', expiryMonth: 12, expiryYear: 2035 }))).toMatchObject({
      code: 'parameter_unknown',
      param: 'cardNumber',
    });
  });

  it('never echoes a submitted value in its messages', () => {
    const pan = '4242424242424242';
    for (const body of [
      cardBody({ number: Number(pan) }),
      cardBody({ expiryMonth: pan }),
      { [pan]: 1, number: pan, expiryMonth: 1, expiryYear: 2035 },
    ]) {
      expect(errorOf(() => parseCardInput(body)).message).not.toContain(pan);
    }
  });
});

describe('proxy request validation', () => {
  it('accepts a valid request and upper-cases the method whatever its case', () => {
    expect(parseProxyRequest(proxyBody({ method: 'PoSt' }))).toMatchObject({
      method: 'POST',
      token: 'tok.abc',
      pspBody: '{"n":"[CARD_NUMBER]"}',
    });
    for (const method of ['get', 'put', 'patch', 'delete'])
      expect(parseProxyRequest(proxyBody({ method })).method).toBe(method.toUpperCase());
  });

  it('defaults pspHeaders to {} and leaves pspBody optional for every method', () => {
    const parsed = parseProxyRequest(proxyBody({ pspHeaders: undefined, pspBody: undefined }));
    expect(parsed.pspHeaders).toEqual({});
    expect(parsed.pspBody).toBeUndefined();
  });

  it.each(['method', 'token', 'pspUrl'])('reports a missing %s as parameter_missing', (field) => {
    expect(errorOf(() => parseProxyRequest(proxyBody({ [field]: undefined })))).toMatchObject({ code: 'parameter_missing', param: field });
  });

  it.each([
    ['method', 'head'],
    ['method', 'CONNECT'],
    ['method', 1],
    ['token', ''],
    ['token', 7],
    ['pspUrl', 'psp.example/charges'],
    ['pspUrl', '/relative'],
    ['pspUrl', 42],
    ['pspHeaders', ['a', 'b']],
    ['pspHeaders', 'content-type: text/plain'],
    ['pspHeaders', { 'x-amount': 5 }],
    ['pspHeaders', { 'bad header': 'v' }],
    ['pspHeaders', { 'x-ok': 'line\r\nx-injected: 1' }],
    ['pspHeaders', { 'x-ok': 'nul\u0000' }],
    ['pspHeaders', { 'content-type': 'text/plain', 'Content-Type': 'application/json' }],
    ['pspHeaders', { Authorization: 'Bearer a', AUTHORIZATION: 'Bearer b' }],
    ['pspBody', { n: 1 }],
  ])('reports %s = %j as parameter_invalid with that param', (field, value) => {
    expect(errorOf(() => parseProxyRequest(proxyBody({ [field]: value })))).toMatchObject({ code: 'parameter_invalid', param: field });
  });

  it('reports an unknown field as parameter_unknown naming the field', () => {
    expect(errorOf(() => parseProxyRequest(proxyBody({ pspMethod: 'post' })))).toMatchObject({
      code: 'parameter_unknown',
      param: 'pspMethod',
    });
  });

  it('redacts a card number used as the unknown field name, in any spacing', () => {
    for (const [key, param] of [
      ['4242424242424242', '[redacted]'],
      ['card 4242 4242 4242 4242', 'card [redacted]'],
      ['x-5555-5555-5555-4444-y', 'x-[redacted]-y'],
      ['order12345678901', 'order12345678901'],
    ]) {
      expect(errorOf(() => parseProxyRequest(proxyBody({ [key as string]: 1 })))).toMatchObject({ code: 'parameter_unknown', param });
    }
  });
});
