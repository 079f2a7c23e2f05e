import { aCard, apiClient, type ApiKey, findCardDataInLogs, TEST_AMEX_CVV, TEST_CARDS, TEST_CVV, useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack();
const acmeId = env.merchant('acme');
const globexId = env.merchant('globex');

let acme: ApiKey;
let globex: ApiKey;

beforeAll(async () => {
  acme = env.stack.createKey(acmeId, 'test');
  globex = env.stack.createKey(globexId, 'test');
});

describe('POST /v1/token', () => {
  it('creates a token and answers 201 with the token record and no card data', async () => {
    const res = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', aCard({ number: '4242 4242 4242 4242', expiryMonth: 7 }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ last4: '4242', brand: 'visa', expiryMonth: 7, expiryYear: aCard().expiryYear, cvvAvailable: true });
    expect(res.body.token).toMatch(/^tok\.[A-Za-z0-9_-]{22,}$/);
    expect(res.text).not.toContain('424242424242');
    expect(res.text).not.toContain(TEST_CVV);
  });

  it.each([
    ['mastercard', TEST_CARDS.mastercard, 123, 'mastercard'],
    ['amex', TEST_CARDS.amex, TEST_AMEX_CVV, 'amex'],
  ])('recognises the %s test card', async (_label, number, cvv, brand) => {
    const res = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', aCard({ number, cvv }));
    expect(res.status).toBe(201);
    expect(res.body.brand).toBe(brand);
  });

  it('issues a different token every time, even for the same card', async () => {
    const call = apiClient(env.stack, acme.apiKey);
    const [a, b] = await Promise.all([call('POST', '/v1/token', aCard()), call('POST', '/v1/token', aCard())]);
    expect(a.body.token).not.toBe(b.body.token);
  });

  it('issues tokens that share nothing with the card number and differ across merchants for the same card', async () => {
    const pan = TEST_CARDS.mastercard;
    const panRuns = new Set(Array.from({ length: pan.length - 3 }, (_, i) => pan.slice(i, i + 4)));
    const tokensOf = async (apiKey: string) => {
      const call = apiClient(env.stack, apiKey);
      const results = await Promise.all(Array.from({ length: 15 }, () => call('POST', '/v1/token', aCard({ number: pan, cvv: 123 }))));
      return results.map((r) => r.body.token as string);
    };
    const [acmeTokens, globexTokens] = [await tokensOf(acme.apiKey), await tokensOf(globex.apiKey)];
    for (const token of [...acmeTokens, ...globexTokens]) {
      expect([...panRuns].filter((run) => token.includes(run))).toEqual([]);
    }
    expect(new Set([...acmeTokens, ...globexTokens]).size).toBe(30);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a missing number', { number: undefined }, 'number', 'parameter_missing'],
    ['a numeric number', { number: 4242424242424242 }, 'number', 'parameter_invalid'],
    ['a Luhn-invalid number', { number: '4242424242424241' }, 'number', 'card_number_invalid'],
    ['a too short number', { number: '42424242' }, 'number', 'card_number_invalid'],
    ['a missing expiry month', { expiryMonth: undefined }, 'expiryMonth', 'parameter_missing'],
    ['month 13', { expiryMonth: 13 }, 'expiryMonth', 'parameter_invalid'],
    ['a string month', { expiryMonth: '12' }, 'expiryMonth', 'parameter_invalid'],
    ['a missing expiry year', { expiryYear: undefined }, 'expiryYear', 'parameter_missing'],
    ['a two-digit year', { expiryYear: 30 }, 'expiryYear', 'parameter_invalid'],
    ['an expired card', { expiryMonth: 1, expiryYear: 2020 }, 'expiryYear', 'card_expired'],
    ['a five-digit cvv', { cvv: 12345 }, 'cvv', 'cvv_invalid'],
    ['a cvv with letters', { cvv: '12a' }, 'cvv', 'cvv_invalid'],
    ['a boolean cvv', { cvv: true }, 'cvv', 'parameter_invalid'],
    ['a numeric holder name', { holderName: 42 }, 'holderName', 'parameter_invalid'],
    ['an unknown field', { pin: '1234' }, 'pin', 'parameter_unknown'],
    ['a real card with a test key', { number: '4111111111111111' }, 'number', 'live_card_in_test_mode'],
  ])('rejects %s with 400 naming the param', async (_label, overrides, param, code) => {
    const res = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', aCard(overrides));
    expect(res.status).toBe(400);
    expect(res.headers.get('x-tessera-error')).toBe(code);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body.error).toMatchObject({ code, param, type: 'invalid_request_error' });
    expect(res.body.error.requestId).toEqual(expect.any(String));
  });

  it('refuses a test card on a live key', async () => {
    const live = env.stack.createKey(acmeId, 'live');
    const res = await apiClient(env.stack, live.apiKey)('POST', '/v1/token', aCard());
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'test_card_in_live_mode', param: 'number' });
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', '{"number": "42', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  it('answers a non-JSON content type with 415', async () => {
    const res = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', 'number=4242424242424242', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  it('answers a body over 1 MiB with 413', async () => {
    const res = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', aCard({ holderName: 'x'.repeat(1024 * 1024 + 10) }));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('body_too_large');
  });
});

describe('reading back and deleting tokens', () => {
  it('returns the token record, without card data, to the merchant that created it', async () => {
    const call = apiClient(env.stack, acme.apiKey);
    const created = await call('POST', '/v1/token', aCard());
    const read = await call('GET', `/v1/token/${created.body.token}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('hides a token from other merchants with 404, for read, delete and proxy', async () => {
    const created = await apiClient(env.stack, acme.apiKey)('POST', '/v1/token', aCard());
    const other = apiClient(env.stack, globex.apiKey);
    expect((await other('GET', `/v1/token/${created.body.token}`)).status).toBe(404);
    expect((await other('DELETE', `/v1/token/${created.body.token}`)).status).toBe(404);
    const proxied = await other('POST', '/v1/proxy', {
      method: 'post',
      token: created.body.token,
      // An allowed destination (PSP_ALLOWED_PORTS) where nothing listens: the token check comes first.
      pspUrl: 'http://127.0.0.1:1025/x',
      pspBody: '[CARD_NUMBER]',
    });
    expect(proxied.status).toBe(404);
    expect(proxied.body.error.code).toBe('token_not_found');
    // The owner can still use it: the other merchant's delete did nothing.
    expect((await apiClient(env.stack, acme.apiKey)('GET', `/v1/token/${created.body.token}`)).status).toBe(200);
  });

  it('deletes a token with 204, after which it is gone', async () => {
    const call = apiClient(env.stack, acme.apiKey);
    const created = await call('POST', '/v1/token', aCard());
    const deleted = await call('DELETE', `/v1/token/${created.body.token}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const read = await call('GET', `/v1/token/${created.body.token}`);
    expect(read.status).toBe(404);
    expect(read.body.error.code).toBe('token_not_found');
  });

  it('answers 404 for a token that never existed or is malformed', async () => {
    const call = apiClient(env.stack, acme.apiKey);
    expect((await call('GET', '/v1/token/tok.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
    expect((await call('GET', '/v1/token/not-a-token')).status).toBe(404);
  });
});

describe('authentication', () => {
  it('answers 401 api_key_missing without an x-api-key header', async () => {
    const res = await apiClient(env.stack)('POST', '/v1/token', aCard());
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'api_key_missing', type: 'authentication_error' });
  });

  it('answers 401 api_key_invalid for an unknown key', async () => {
    const res = await apiClient(env.stack, 'tsk_test_' + 'x'.repeat(32))('POST', '/v1/token', aCard());
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('api_key_invalid');
  });

  it('answers 401 api_key_invalid as soon as a key is revoked', async () => {
    const key = env.stack.createKey(acmeId, 'test');
    expect((await apiClient(env.stack, key.apiKey)('POST', '/v1/token', aCard())).status).toBe(201);
    env.stack.revokeKey(key.id);
    const res = await apiClient(env.stack, key.apiKey)('POST', '/v1/token', aCard());
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('api_key_invalid');
  });

  it('answers 401 ip_not_allowed from outside the key allowlist, and 201 from inside', async () => {
    const outside = env.stack.createKey(acmeId, 'test', ['10.0.0.0/8', '2001:db8::/32']);
    const inside = env.stack.createKey(acmeId, 'test', ['127.0.0.0/8']);
    const refused = await apiClient(env.stack, outside.apiKey)('POST', '/v1/token', aCard());
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('ip_not_allowed');
    expect((await apiClient(env.stack, inside.apiKey)('POST', '/v1/token', aCard())).status).toBe(201);
  });

  it('ignores X-Forwarded-For from an untrusted peer', async () => {
    const key = env.stack.createKey(acmeId, 'test', ['10.1.2.3/32']);
    const res = await apiClient(env.stack, key.apiKey)('POST', '/v1/token', aCard(), { 'x-forwarded-for': '10.1.2.3' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('ip_not_allowed');
  });

  it('lists keys with the CLI without ever printing a key', () => {
    const listing = env.stack.cli(['list', '--json']);
    expect(listing).toContain(acme.id);
    expect(listing).not.toContain(acme.apiKey);
  });
});

describe('routing and health', () => {
  it('answers unknown routes and other API versions with 404 route_not_found', async () => {
    const call = apiClient(env.stack, acme.apiKey);
    for (const route of ['/v1/nope', '/v2/token', '/token']) {
      const res = await call('GET', route);
      expect(res.status).toBe(404);
      expect(res.headers.get('x-tessera-error')).toBe('route_not_found');
    }
  });

  it('reports health and readiness without an API key', async () => {
    const call = apiClient(env.stack);
    expect((await call('GET', '/healthz')).status).toBe(200);
    expect((await call('GET', '/readyz')).status).toBe(200);
  });

  it('echoes a caller-supplied request id', async () => {
    const res = await apiClient(env.stack, acme.apiKey)('GET', '/v1/token/tok.missingmissingmissing', undefined, {
      'x-request-id': 'order-42.attempt-1',
    });
    expect(res.headers.get('x-request-id')).toBe('order-42.attempt-1');
    expect(res.body.error.requestId).toBe('order-42.attempt-1');
  });
});

describe('logs', () => {
  it('never contain a card number, a CVV or an API key', async () => {
    const logs = env.stack.logs();
    expect(logs.length).toBeGreaterThan(0);
    expect(findCardDataInLogs(logs, [...Object.values(TEST_CARDS), '4111111111111111'], [TEST_CVV, TEST_AMEX_CVV])).toEqual([]);
    expect(logs).not.toContain(acme.apiKey);
    expect(logs).not.toContain('Ada Lovelace');
  });
});
