import { TesseraError } from '@tessera/common';
import type {
  DryRunReport,
  ForwardCall,
  ForwardResponse__Output,
  TokenizeRequest,
  TokenRecord__Output,
  TokenRef,
  UpdateTokenRequest,
  AttachCvvRequest,
  Readiness,
} from '@tessera/protos';
import { issueApiKey, RedisApiKeyStore, RedisMerchantSettingsStore } from '@tessera/merchant-data';
import { aTokenRecord, anIdempotency, captureLogger, TEST_PEPPER } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createApp } from './app';
import type { ProxyApi, VaultApi } from '../app/ports';

const JSON_HEADERS = { 'content-type': 'application/json' };
const TEST_PAN = '4242424242424242';

const db = useGatewayRedis();

const tokenRecord = (overrides: Partial<TokenRecord__Output> = {}): TokenRecord__Output =>
  aTokenRecord({ cvvAvailable: true, ...overrides });

/** A small stand-in for the vault's gRPC client: records calls, answers from a script. */
class FakeVault implements VaultApi {
  calls: Array<{ method: string; request: unknown; requestId: string }> = [];
  failWith?: TesseraError | Error;
  readyResult: Readiness | 'hang' = { ready: true, detail: '' };

  private record(method: string, request: unknown, requestId: string) {
    this.calls.push({ method, request, requestId });
    if (this.failWith) throw this.failWith;
  }
  async tokenize(request: TokenizeRequest, ctx: { requestId: string }) {
    this.record('tokenize', request, ctx.requestId);
    return tokenRecord({ last4: request.number.slice(-4) });
  }
  async getToken(ref: TokenRef, ctx: { requestId: string }) {
    this.record('getToken', ref, ctx.requestId);
    return tokenRecord({ token: ref.token, expiresAt: '' });
  }
  async deleteToken(ref: TokenRef, ctx: { requestId: string }) {
    this.record('deleteToken', ref, ctx.requestId);
  }
  async retainToken(ref: TokenRef, ctx: { requestId: string }) {
    this.record('retainToken', ref, ctx.requestId);
    return tokenRecord({ token: ref.token, provisional: false });
  }
  async updateToken(request: UpdateTokenRequest, ctx: { requestId: string }) {
    this.record('updateToken', request, ctx.requestId);
    return tokenRecord({ token: request.token });
  }
  async attachCvv(request: AttachCvvRequest, ctx: { requestId: string }) {
    this.record('attachCvv', request, ctx.requestId);
    return tokenRecord({ token: request.token, cvvAvailable: true });
  }
  async ready() {
    if (this.readyResult === 'hang') return new Promise<Readiness>(() => {});
    return this.readyResult;
  }
  close() {}
}

class FakeProxy implements ProxyApi {
  calls: Array<{ request: ForwardCall; requestId: string }> = [];
  response: ForwardResponse__Output = { status: 200, headers: [], body: Buffer.alloc(0), pspMs: 1 };
  failWith?: TesseraError;
  readyResult: Readiness = { ready: true, detail: '' };

  async forward(request: ForwardCall, ctx: { requestId: string }) {
    this.calls.push({ request, requestId: ctx.requestId });
    if (this.failWith) throw this.failWith;
    return this.response;
  }
  dryRunResponse: DryRunReport = {
    method: 'POST',
    url: 'https://psp.example/charges',
    headers: [{ name: 'content-type', value: 'application/json' }],
    hasBody: true,
    preview: { body: '{"card":"424242******4242"}', filled: ['[CARD_NUMBER]'], unfillable: [], unknown: [] },
    destinationAllowed: true,
    destinationErrorCode: '',
    destinationErrorMessage: '',
  };
  async dryRun(request: ForwardCall, ctx: { requestId: string }) {
    this.calls.push({ request, requestId: ctx.requestId });
    if (this.failWith) throw this.failWith;
    return this.dryRunResponse;
  }
  async forwardRoute(): Promise<never> {
    throw new Error('the forward proxy is not part of this app');
  }
  async ready() {
    return this.readyResult;
  }
  close() {}
}

/** The vault's forward-proxy CA, one per merchant. */
const fakeForwardProxyVault = {
  caCertificatePem: async (merchantId: string) => `-----BEGIN CERTIFICATE-----\n${merchantId}\n-----END CERTIFICATE-----\n`,
};

interface Harness {
  app: RunningApp;
  store: RedisApiKeyStore;
  vault: FakeVault;
  proxy: FakeProxy;
  merchantSettings: RedisMerchantSettingsStore;
  logs: () => string[];
  testKey: string;
  liveKey: string;
}

async function startHarness(
  config: Partial<{ BODY_LIMIT_BYTES: number; TRUSTED_PROXIES: string[]; READY_TIMEOUT_MS: number }> = {},
): Promise<Harness> {
  await db.redis.flushall();
  const store = new RedisApiKeyStore(db.redis);
  const vault = new FakeVault();
  const proxy = new FakeProxy();
  const merchantSettings = new RedisMerchantSettingsStore(db.redis);
  const { logger, lines } = captureLogger();
  const test = issueApiKey({ merchantId: 'm_test', mode: 'test', allowedCidrs: [], pepper: TEST_PEPPER, now: new Date() });
  const live = issueApiKey({ merchantId: 'm_live', mode: 'live', allowedCidrs: [], pepper: TEST_PEPPER, now: new Date() });
  await store.create(test.record);
  await store.create(live.record);
  const app = await startApp(
    createApp({
      config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: [], ...config },
      logger,
      keyStore: store,
      pepper: TEST_PEPPER,
      idempotency: anIdempotency(db.redis),
      vault,
      proxy,
      merchantSettings,
      forwardProxyVault: fakeForwardProxyVault,
    }),
  );
  return { app, store, vault, proxy, merchantSettings, logs: lines, testKey: test.apiKey, liveKey: live.apiKey };
}

function expectEnvelope(
  res: { status: number; headers: Record<string, unknown>; json(): any },
  status: number,
  code: string,
  param?: string,
) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-tessera-error']).toBe(code);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toEqual({
    type: expect.any(String),
    code,
    message: expect.any(String),
    ...(param !== undefined ? { param } : {}),
    requestId: res.headers['x-request-id'],
  });
}

const validCard = { number: TEST_PAN, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvv: 123 };

describe('gateway HTTP app', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.app.close();
  });

  describe('GET /v1/forward-proxy/ca.pem', () => {
    it("answers the key's merchant's CA certificate as PEM, with a secret key only", async () => {
      const res = await h.app.request('GET', '/v1/forward-proxy/ca.pem', { headers: { 'x-api-key': h.testKey } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-pem-file');
      expect(res.body.toString('utf8')).toBe('-----BEGIN CERTIFICATE-----\nm_test\n-----END CERTIFICATE-----\n');
      expectEnvelope(await h.app.request('GET', '/v1/forward-proxy/ca.pem'), 401, 'api_key_missing');
    });
  });

  describe('health and readiness', () => {
    it('answers /healthz without authentication', async () => {
      const res = await h.app.request('GET', '/healthz');
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
    });

    it('reports ready when the vault, the proxy and the key store all answer', async () => {
      const res = await h.app.request('GET', '/readyz');
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ status: 'ready', checks: { vault: 'ok', proxy: 'ok', keyStore: 'ok' } });
    });

    it('reports 503 naming the failing check when a dependency is down or does not answer in time', async () => {
      h.proxy.readyResult = { ready: false, detail: 'draining' };
      h.vault.readyResult = 'hang';
      const res = await h.app.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.json()).toEqual({ status: 'unavailable', checks: { vault: 'unavailable', proxy: 'unavailable', keyStore: 'ok' } });
    });
  });

  describe('request ids', () => {
    it('echoes a well-formed incoming x-request-id and passes it to the vault', async () => {
      const res = await h.app.request('POST', '/v1/token', {
        headers: { ...JSON_HEADERS, 'x-api-key': h.testKey, 'x-request-id': 'client-42.a_b' },
        body: JSON.stringify(validCard),
      });
      expect(res.status).toBe(201);
      expect(res.headers['x-request-id']).toBe('client-42.a_b');
      expect(h.vault.calls[0]?.requestId).toBe('client-42.a_b');
    });

    it('replaces a malformed incoming x-request-id with a generated one', async () => {
      const res = await h.app.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(res.headers['x-request-id']).toMatch(/^req_[\w-]+$/);
    });

    it('never echoes or logs an incoming x-request-id that could be a card number', async () => {
      for (const id of ['4242424242424242', 'req-5555-5555-5555-4444']) {
        const res = await h.app.request('GET', '/healthz', { headers: { 'x-request-id': id } });
        expect(res.headers['x-request-id']).toMatch(/^req_[\w-]+$/);
      }
    });
  });

  describe('authentication', () => {
    it('rejects a request without x-api-key as 401 api_key_missing', async () => {
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.x'), 401, 'api_key_missing');
    });

    it('rejects a malformed key as 401 api_key_invalid', async () => {
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': 'tsk_test_short' } }), 401, 'api_key_invalid');
    });

    it('rejects a key whose checksum does not match as 401 api_key_invalid, without looking it up', async () => {
      const lookup = jest.spyOn(h.store, 'findByDigest');
      const typo = h.testKey.slice(0, 12) + (h.testKey[12] === 'a' ? 'b' : 'a') + h.testKey.slice(13);
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': typo } }), 401, 'api_key_invalid');
      expect(lookup).not.toHaveBeenCalled();
      lookup.mockRestore();
    });

    it('rejects a well-formed but unknown key as 401 api_key_invalid', async () => {
      const other = issueApiKey({ merchantId: 'x', mode: 'test', allowedCidrs: [], pepper: TEST_PEPPER, now: new Date() });
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': other.apiKey } }), 401, 'api_key_invalid');
    });

    it('rejects a key as soon as it is revoked', async () => {
      const first = await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': h.testKey } });
      expect(first.status).toBe(200);
      const [record] = (await h.store.list()).filter((r) => r.merchantId === 'm_test');
      await h.store.revoke(record!.id, new Date());
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': h.testKey } }), 401, 'api_key_invalid');
    });

    it('rejects a key used from outside its IP allowlist as 401 ip_not_allowed, and accepts it from inside', async () => {
      const outside = issueApiKey({
        merchantId: 'm',
        mode: 'test',
        allowedCidrs: ['203.0.113.0/24'],
        pepper: TEST_PEPPER,
        now: new Date(),
      });
      const inside = issueApiKey({
        merchantId: 'm',
        mode: 'test',
        allowedCidrs: ['127.0.0.0/8', '::1/128'],
        pepper: TEST_PEPPER,
        now: new Date(),
      });
      await h.store.create(outside.record);
      await h.store.create(inside.record);
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': outside.apiKey } }), 401, 'ip_not_allowed');
      expect((await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': inside.apiKey } })).status).toBe(200);
    });

    it('does not let a client spoof X-Forwarded-For when no proxy is trusted', async () => {
      const key = issueApiKey({ merchantId: 'm', mode: 'test', allowedCidrs: ['203.0.113.0/24'], pepper: TEST_PEPPER, now: new Date() });
      await h.store.create(key.record);
      const res = await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': key.apiKey, 'x-forwarded-for': '203.0.113.9' } });
      expectEnvelope(res, 401, 'ip_not_allowed');
    });

    it('records when and from where a key was last used', async () => {
      await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': h.testKey } });
      await new Promise((r) => setImmediate(r));
      const [record] = (await h.store.list()).filter((r) => r.merchantId === 'm_test');
      expect(record?.lastUsedAt).toEqual(expect.any(String));
      expect(record?.lastUsedIp).toBe('127.0.0.1');
    });

    it('answers 503 service_unavailable when the key store is down', async () => {
      jest.spyOn(h.store, 'findByDigest').mockRejectedValue(new TesseraError('service_unavailable'));
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.x', { headers: { 'x-api-key': h.testKey } }), 503, 'service_unavailable');
    });

    it('authenticates before looking at the body', async () => {
      const res = await h.app.request('POST', '/v1/token', { headers: { 'content-type': 'text/plain' }, body: 'x' });
      expectEnvelope(res, 401, 'api_key_missing');
    });
  });

  describe('request bodies', () => {
    it('rejects a POST that is not application/json with 415', async () => {
      const res = await h.app.request('POST', '/v1/token', {
        headers: { 'x-api-key': h.testKey, 'content-type': 'text/plain' },
        body: JSON.stringify(validCard),
      });
      expectEnvelope(res, 415, 'unsupported_media_type');
    });

    it('accepts application/json with a charset parameter', async () => {
      const res = await h.app.request('POST', '/v1/token', {
        headers: { 'x-api-key': h.testKey, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(validCard),
      });
      expect(res.status).toBe(201);
    });

    it('rejects malformed JSON with 400 invalid_json', async () => {
      const res = await h.app.request('POST', '/v1/token', {
        headers: { ...JSON_HEADERS, 'x-api-key': h.testKey },
        body: `{"number":"${TEST_PAN}",`,
      });
      expectEnvelope(res, 400, 'invalid_json');
      expect(res.body.toString()).not.toContain(TEST_PAN);
    });

    it.each([['[]'], ['"text"'], ['42'], ['null']])('rejects the JSON body %s because it is not an object', async (body) => {
      const res = await h.app.request('POST', '/v1/token', { headers: { ...JSON_HEADERS, 'x-api-key': h.testKey }, body });
      expectEnvelope(res, 400, 'invalid_request');
    });

    it('rejects a body over BODY_LIMIT_BYTES with 413 body_too_large', async () => {
      const small = await startHarness({ BODY_LIMIT_BYTES: 1024 });
      try {
        const body = JSON.stringify({ ...validCard, holderName: 'x'.repeat(2000) });
        const res = await small.app.request('POST', '/v1/token', { headers: { ...JSON_HEADERS, 'x-api-key': small.testKey }, body });
        expectEnvelope(res, 413, 'body_too_large');
      } finally {
        await small.app.close();
      }
    });
  });

  describe('POST /v1/token', () => {
    const post = (key: string, body: unknown) =>
      h.app.request('POST', '/v1/token', { headers: { ...JSON_HEADERS, 'x-api-key': key }, body: JSON.stringify(body) });

    it('tokenizes a valid card: 201 with the token record, and the vault gets normalised data for the key’s merchant', async () => {
      const res = await post(h.testKey, { ...validCard, number: '4242 4242-4242 4242', holderName: 'Ada' });
      expect(res.status).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      // The vault's record field for field, without its internal `deduplicated` flag.
      const { deduplicated: _, ...record } = tokenRecord();
      expect(res.json()).toEqual(record);
      // Not provisional: only the browser tokenization route asks for that.
      expect(h.vault.calls[0]?.request).toEqual({
        merchantId: 'm_test',
        mode: 'test',
        number: TEST_PAN,
        holderName: 'Ada',
        expiryMonth: 12,
        expiryYear: validCard.expiryYear,
        cvv: '123',
        provisional: false,
      });
    });

    it.each([
      [{ expiryMonth: 12, expiryYear: 2035 }, 'parameter_missing', 'number'],
      [{ ...validCard, expiryMonth: '12' }, 'parameter_invalid', 'expiryMonth'],
      [{ ...validCard, pan: TEST_PAN }, 'parameter_unknown', 'pan'],
      [{ ...validCard, number: '4242424242424241' }, 'card_number_invalid', 'number'],
      [{ ...validCard, expiryMonth: 13 }, 'parameter_invalid', 'expiryMonth'],
      // No card is issued for more than about 20 years (the cap of docs/api.md).
      [{ ...validCard, expiryYear: new Date().getUTCFullYear() + 21 }, 'parameter_invalid', 'expiryYear'],
      [{ ...validCard, cvv: '12' }, 'cvv_invalid', 'cvv'],
    ])('rejects %j with 400 %s (param %s) and never calls the vault', async (body, code, param) => {
      const res = await post(h.testKey, body);
      expectEnvelope(res, 400, code, param);
      expect(res.body.toString()).not.toContain(TEST_PAN);
      expect(h.vault.calls).toHaveLength(0);
    });

    it('rejects a test card with a live key; a real card with a test key is refused by the vault, which first tells an alias from it', async () => {
      expectEnvelope(await post(h.liveKey, validCard), 400, 'test_card_in_live_mode', 'number');
      expect(h.vault.calls).toHaveLength(0);
      h.vault.failWith = new TesseraError('live_card_in_test_mode', { param: 'number' });
      expectEnvelope(await post(h.testKey, { ...validCard, number: '4111111111111111' }), 400, 'live_card_in_test_mode', 'number');
      expect(h.vault.calls).toHaveLength(1);
    });

    it('maps vault errors to their envelope (503 when the vault is down)', async () => {
      h.vault.failWith = new TesseraError('service_unavailable');
      expectEnvelope(await post(h.testKey, validCard), 503, 'service_unavailable');
    });

    it('turns an unexpected exception into 500 internal_error without internals, and logs it masked', async () => {
      h.vault.failWith = new Error(`database exploded near ${TEST_PAN}`);
      const res = await post(h.testKey, validCard);
      expectEnvelope(res, 500, 'internal_error');
      expect(res.json().error.message).toBe('An internal error occurred.');
      const logs = h.logs().join('\n');
      expect(logs).toContain('database exploded');
      expect(logs).not.toContain(TEST_PAN);
    });
  });

  describe('GET and DELETE /v1/token/:token', () => {
    it('reads a token record back for the key’s merchant and mode', async () => {
      const res = await h.app.request('GET', '/v1/token/tok.abc', { headers: { 'x-api-key': h.liveKey } });
      expect(res.status).toBe(200);
      expect(res.json()).toMatchObject({ token: 'tok.abc', expiresAt: null });
      expect(h.vault.calls[0]).toMatchObject({ method: 'getToken', request: { merchantId: 'm_live', mode: 'live', token: 'tok.abc' } });
    });

    it('passes the vault’s 404 through', async () => {
      h.vault.failWith = new TesseraError('token_not_found');
      expectEnvelope(await h.app.request('GET', '/v1/token/tok.abc', { headers: { 'x-api-key': h.testKey } }), 404, 'token_not_found');
    });

    it('deletes a token of the key’s merchant and mode with 204 and no body', async () => {
      const res = await h.app.request('DELETE', '/v1/token/tok.abc', { headers: { 'x-api-key': h.testKey } });
      expect(res.status).toBe(204);
      expect(res.body.length).toBe(0);
      expect(h.vault.calls[0]).toMatchObject({ method: 'deleteToken', request: { merchantId: 'm_test', mode: 'test', token: 'tok.abc' } });
    });
  });

  describe('PATCH /v1/token/:token', () => {
    const patch = (body: unknown, key = h.testKey) =>
      h.app.request('PATCH', '/v1/token/tok.abc', { headers: { ...JSON_HEADERS, 'x-api-key': key }, body: JSON.stringify(body) });

    it('sends the new expiry and holder name for the key’s merchant and mode; 0 and "" keep a stored value', async () => {
      const year = new Date().getUTCFullYear() + 2;
      expect((await patch({ expiryMonth: 7, expiryYear: year })).status).toBe(200);
      expect((await patch({ holderName: 'Ada King' })).status).toBe(200);
      expect(h.vault.calls.map((c) => c.request)).toEqual([
        { merchantId: 'm_test', mode: 'test', token: 'tok.abc', expiryMonth: 7, expiryYear: year, holderName: '' },
        { merchantId: 'm_test', mode: 'test', token: 'tok.abc', expiryMonth: 0, expiryYear: 0, holderName: 'Ada King' },
      ]);
    });

    it.each([
      ['an expired card', { expiryMonth: 1, expiryYear: 2020 }, 'card_expired', 'expiryYear'],
      [
        'an expiry more than 20 years ahead',
        { expiryMonth: 1, expiryYear: new Date().getUTCFullYear() + 21 },
        'parameter_invalid',
        'expiryYear',
      ],
      ['an expiry 50 years ahead', { expiryMonth: 1, expiryYear: new Date().getUTCFullYear() + 50 }, 'parameter_invalid', 'expiryYear'],
      ['a month without a year', { expiryMonth: 1 }, 'parameter_missing', 'expiryYear'],
      ['a year without a month', { expiryYear: 2040 }, 'parameter_missing', 'expiryMonth'],
      ['a new number', { number: '4242424242424242' }, 'parameter_unknown', 'number'],
      ['nothing to change', {}, 'invalid_request', undefined],
      ['an empty holder name', { holderName: '' }, 'parameter_invalid', 'holderName'],
    ])('refuses %s (400) and never calls the vault', async (_what, body, code, param) => {
      expectEnvelope(await patch(body), 400, code, param);
      expect(h.vault.calls).toHaveLength(0);
    });
  });

  describe('POST /v1/token/:token/cvc', () => {
    const cvc = (body: unknown) =>
      h.app.request('POST', '/v1/token/tok.abc/cvc', { headers: { ...JSON_HEADERS, 'x-api-key': h.testKey }, body: JSON.stringify(body) });

    it('sends the CVV as given, saying whether it was an integer (the vault pads it to the brand)', async () => {
      expect((await cvc({ cvv: '046' })).json()).toMatchObject({ token: 'tok.abc', cvvAvailable: true });
      expect((await cvc({ cvv: 46 })).status).toBe(200);
      expect(h.vault.calls.map((c) => c.request)).toEqual([
        { merchantId: 'm_test', mode: 'test', token: 'tok.abc', cvv: '046', cvvIsInteger: false },
        { merchantId: 'm_test', mode: 'test', token: 'tok.abc', cvv: '46', cvvIsInteger: true },
      ]);
    });

    it.each([
      ['no CVV', {}, 'parameter_missing', 'cvv'],
      ['another field', { cvc: '123' }, 'parameter_unknown', 'cvc'],
      ['a CVV of the wrong type', { cvv: [1, 2, 3] }, 'parameter_invalid', 'cvv'],
    ])('refuses %s (400) and never calls the vault', async (_what, body, code, param) => {
      expectEnvelope(await cvc(body), 400, code, param);
      expect(h.vault.calls).toHaveLength(0);
    });
  });

  describe('POST /v1/token/:token/retain', () => {
    const retain = (opts: { headers?: Record<string, string>; body?: string } = {}, key = h.liveKey) =>
      h.app.request('POST', '/v1/token/tok.abc/retain', { ...opts, headers: { 'x-api-key': key, ...opts.headers } });

    it('retains a token of the key’s merchant and mode: 200 with the token record, provisional false', async () => {
      const res = await retain();
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toMatchObject({ token: 'tok.abc', last4: '4242', provisional: false });
      // Read first: whether it was provisional decides the token.retained event.
      const ref = { merchantId: 'm_live', mode: 'live', token: 'tok.abc' };
      expect(h.vault.calls).toEqual([
        { method: 'getToken', request: ref, requestId: expect.any(String) },
        { method: 'retainToken', request: ref, requestId: expect.any(String) },
      ]);
    });

    it('takes an empty JSON object as well as no body', async () => {
      const res = await retain({ headers: JSON_HEADERS, body: '{}' });
      expect(res.status).toBe(200);
      expect(h.vault.calls.map((c) => c.method)).toEqual(['getToken', 'retainToken']);
    });

    it.each([
      ['a field', 400, 'parameter_unknown', 'ttl', JSON_HEADERS, '{"ttl":1}'],
      ['malformed JSON', 400, 'invalid_json', undefined, JSON_HEADERS, '{'],
      ['a JSON array', 400, 'invalid_request', undefined, JSON_HEADERS, '[]'],
      ['a form body', 415, 'unsupported_media_type', undefined, { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1'],
    ])('refuses a body with %s (%i %s) and never calls the vault', async (_what, status, code, param, headers, body) => {
      expectEnvelope(await retain({ headers, body }), status, code, param);
      expect(h.vault.calls).toHaveLength(0);
    });

    it('needs an API key and passes the vault’s 404 through', async () => {
      expectEnvelope(await h.app.request('POST', '/v1/token/tok.abc/retain'), 401, 'api_key_missing');
      h.vault.failWith = new TesseraError('token_not_found');
      expectEnvelope(await retain(), 404, 'token_not_found');
    });
  });

  describe('POST /v1/proxy', () => {
    const proxyRequest = {
      method: 'post',
      token: 'tok.abc',
      pspUrl: 'https://psp.example/charges',
      pspHeaders: { 'content-type': 'application/json' },
      pspBody: '{"card":"[CARD_NUMBER]"}',
    };
    const post = (body: unknown, key = h.testKey) =>
      h.app.request('POST', '/v1/proxy', { headers: { ...JSON_HEADERS, 'x-api-key': key }, body: JSON.stringify(body) });

    it('forwards the request with the key’s merchant and mode', async () => {
      await post({ ...proxyRequest, method: 'PATCH' }, h.liveKey);
      expect(h.proxy.calls[0]?.request).toEqual({
        merchantId: 'm_live',
        mode: 'live',
        token: 'tok.abc',
        method: 'PATCH',
        url: 'https://psp.example/charges',
        headers: [{ name: 'content-type', value: 'application/json' }],
        bodyTemplate: '{"card":"[CARD_NUMBER]"}',
        hasBody: true,
        allowedHosts: [],
      });
    });

    it('passes the merchant’s PSP host allowlist to the proxy, for forward and dry run alike', async () => {
      await h.merchantSettings.setPspHosts('m_live', ['psp.example', '*.adyen.com'], new Date());
      await post(proxyRequest, h.liveKey);
      await h.app.request('POST', '/v1/proxy/dry-run', {
        headers: { ...JSON_HEADERS, 'x-api-key': h.liveKey },
        body: JSON.stringify(proxyRequest),
      });
      await post(proxyRequest, h.testKey);
      expect(h.proxy.calls.map((c) => c.request.allowedHosts)).toEqual([
        ['psp.example', '*.adyen.com'],
        ['psp.example', '*.adyen.com'],
        [],
      ]);
    });

    it('tells the proxy when there is no body at all', async () => {
      const { pspBody: _omit, ...noBody } = proxyRequest;
      await post({ ...noBody, method: 'get' });
      expect(h.proxy.calls[0]?.request).toMatchObject({ method: 'GET', bodyTemplate: '', hasBody: false });
    });

    it('returns the PSP status, every header (repeats kept) and the exact body bytes, adding only the request id, timing and nosniff headers', async () => {
      const body = Buffer.from([0x7b, 0x22, 0xff, 0x00, 0x22, 0x7d]);
      h.proxy.response = {
        status: 402,
        headers: [
          { name: 'Content-Type', value: 'application/vnd.psp+json' },
          { name: 'Link', value: '</a>; rel=next' },
          { name: 'Link', value: '</b>; rel=prev' },
          { name: 'Date', value: 'Tue, 01 Jan 2030 00:00:00 GMT' },
          { name: 'Content-Length', value: '999' },
        ],
        body,
        pspMs: 12,
      };
      const res = await post(proxyRequest);
      expect(res.status).toBe(402);
      expect(res.body.equals(body)).toBe(true);
      const names = res.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
      expect(names.sort()).toEqual(
        [
          'connection',
          'content-length',
          'content-type',
          'date',
          'keep-alive',
          'link',
          'link',
          'x-content-type-options',
          'x-request-id',
          'x-tessera-request-id',
          'x-tessera-psp-ms',
          'x-tessera-total-ms',
        ].sort(),
      );
      expect(res.headers['x-tessera-request-id']).toBe(res.headers['x-request-id']);
      expect(res.headers['x-tessera-psp-ms']).toBe('12.0');
      expect(Number(res.headers['x-tessera-total-ms'])).toBeGreaterThanOrEqual(0);
      expect(res.headers['content-type']).toBe('application/vnd.psp+json');
      expect(res.rawHeaders.filter((_, i) => i % 2 === 1 && res.rawHeaders[i - 1] === 'Link')).toEqual([
        '</a>; rel=next',
        '</b>; rel=prev',
      ]);
      expect(res.headers['date']).toBe('Tue, 01 Jan 2030 00:00:00 GMT');
      expect(res.headers['content-length']).toBe(String(body.length));
      expect(res.headers['x-tessera-error']).toBeUndefined();
    });

    it('reports PSP failures raised by the proxy in the envelope', async () => {
      h.proxy.failWith = new TesseraError('psp_timeout');
      expectEnvelope(await post(proxyRequest), 504, 'psp_timeout');
    });

    it('adds the request id and total time to errors too, even before authentication, but no PSP time', async () => {
      const res = await post(proxyRequest, 'tsk_test_wrong');
      expectEnvelope(res, 401, 'api_key_invalid');
      expect(res.headers['x-tessera-request-id']).toBe(res.headers['x-request-id']);
      expect(res.headers['x-tessera-total-ms']).toMatch(/^\d+\.\d$/);
      expect(res.headers['x-tessera-psp-ms']).toBeUndefined();
    });
  });

  describe('POST /v1/proxy/dry-run', () => {
    const proxyRequest = {
      method: 'post',
      token: 'tok.abc',
      pspUrl: 'https://psp.example/charges',
      pspHeaders: { 'content-type': 'application/json' },
      pspBody: '{"card":"[CARD_NUMBER]","cvc":"[CARD_CVV]"}',
    };
    const post = (body: unknown, key = h.testKey) =>
      h.app.request('POST', '/v1/proxy/dry-run', { headers: { ...JSON_HEADERS, 'x-api-key': key }, body: JSON.stringify(body) });

    it('asks the proxy for a dry run with the same request a forward would send, and answers its verdict as JSON', async () => {
      const res = await post(proxyRequest);
      expect(res.status).toBe(200);
      expect(h.proxy.calls[0]?.request).toMatchObject({ merchantId: 'm_test', mode: 'test', method: 'POST', hasBody: true });
      expect(res.headers['x-tessera-request-id']).toBe(res.headers['x-request-id']);
      expect(res.json()).toEqual({
        object: 'proxy_dry_run',
        request: {
          method: 'POST',
          url: 'https://psp.example/charges',
          headers: { 'content-type': 'application/json' },
          body: '{"card":"424242******4242"}',
        },
        placeholders: { filled: ['[CARD_NUMBER]'], unfillable: [], unknown: [] },
        destination: { allowed: true },
        wouldSend: true,
      });
    });

    it('says it would not send when the destination is refused or a placeholder cannot be filled', async () => {
      h.proxy.dryRunResponse = {
        ...h.proxy.dryRunResponse,
        preview: { body: '', filled: [], unfillable: [{ placeholder: '[CARD_CVV]', code: 'cvv_unavailable' }], unknown: ['[FOO]'] },
        destinationAllowed: false,
        destinationErrorCode: 'psp_destination_forbidden',
        destinationErrorMessage: 'pspUrl points to a loopback address.',
      };
      const body = (await post(proxyRequest)).json();
      expect(body.wouldSend).toBe(false);
      expect(body.destination).toEqual({
        allowed: false,
        code: 'psp_destination_forbidden',
        message: 'pspUrl points to a loopback address.',
      });
      expect(body.placeholders.unfillable).toEqual([
        { placeholder: '[CARD_CVV]', code: 'cvv_unavailable', message: 'The CVV for this token is no longer available.' },
      ]);
      expect(body.placeholders.unknown).toEqual(['[FOO]']);
    });

    it('validates the body exactly like POST /v1/proxy', async () => {
      expectEnvelope(await post({ ...proxyRequest, method: 'trace' }), 400, 'parameter_invalid', 'method');
      expect(h.proxy.calls).toHaveLength(0);
    });

    it.each([
      [{ ...proxyRequest, method: 'trace' }, 'parameter_invalid', 'method'],
      [{ ...proxyRequest, pspUrl: 'not a url' }, 'parameter_invalid', 'pspUrl'],
      [{ ...proxyRequest, pspHeaders: { 'x-a': 'b\r\nx-evil: 1' } }, 'parameter_invalid', 'pspHeaders'],
      [{ ...proxyRequest, token: undefined }, 'parameter_missing', 'token'],
      [{ ...proxyRequest, extra: true }, 'parameter_unknown', 'extra'],
    ])('rejects %j with 400 %s (param %s) and never calls the proxy', async (body, code, param) => {
      expectEnvelope(await post(body), 400, code, param);
      expect(h.proxy.calls).toHaveLength(0);
    });
  });

  describe('routing', () => {
    it.each([
      ['GET', '/'],
      ['GET', '/v1'],
      ['GET', '/v1/unknown'],
      ['POST', '/v2/token'],
      ['GET', '/v2/token/tok.abc'],
      ['PUT', '/v1/token'],
    ])('answers %s %s with 404 route_not_found', async (method, path) => {
      expectEnvelope(await h.app.request(method, path, { headers: { 'x-api-key': h.testKey } }), 404, 'route_not_found');
    });

    it('answers a malformed path escape with 400, not 500', async () => {
      const res = await h.app.request('GET', '/v1/token/%E0%A4%A', { headers: { 'x-api-key': h.testKey } });
      expect(res.status).toBe(400);
      expect(res.headers['x-tessera-error']).toBe('invalid_request');
    });

    it('adds no x-powered-by or etag header', async () => {
      const res = await h.app.request('GET', '/healthz');
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['etag']).toBeUndefined();
    });
  });

  describe('access log', () => {
    it('writes one line per request with route, status, ids and timing, and never the key or body', async () => {
      await h.app.request('POST', '/v1/token', {
        headers: { ...JSON_HEADERS, 'x-api-key': h.testKey, 'x-request-id': 'log-1' },
        body: JSON.stringify(validCard),
      });
      await new Promise((r) => setImmediate(r));
      const lines = h
        .logs()
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        method: 'POST',
        route: '/v1/token',
        status: 201,
        requestId: 'log-1',
        merchantId: 'm_test',
        keyId: expect.stringMatching(/^key_/),
        ms: expect.any(Number),
      });
      const all = h.logs().join('\n');
      expect(all).not.toContain(h.testKey);
      expect(all).not.toContain(TEST_PAN);
    });

    // The access line is written without pino's redaction (it costs more than the line), which is
    // safe only while every field is one the gateway makes itself: no new field without a review.
    it('holds only gateway-made fields, whatever the request carried', async () => {
      await h.app.request('POST', '/v1/token', { headers: JSON_HEADERS, body: JSON.stringify(validCard) });
      await h.app.request('POST', '/v1/token', {
        headers: { ...JSON_HEADERS, 'x-api-key': h.testKey, 'x-request-id': 'log-2', 'x-card': TEST_PAN },
        body: JSON.stringify({ ...validCard, holderName: 'Jane Doe' }),
      });
      await h.app.request('GET', `/v1/token/${TEST_PAN}`, { headers: { 'x-api-key': h.testKey } });
      await new Promise((r) => setImmediate(r));
      const lines = h
        .logs()
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request');
      expect(lines.map((l) => l.status)).toEqual([401, 201, 200]);
      const fields = ['level', 'time', 'service', 'name', 'method', 'route', 'status', 'ms', 'requestId', 'merchantId', 'keyId', 'msg'];
      for (const line of lines) expect(Object.keys(line).sort()).toEqual([...fields].sort());
      expect(lines[2]?.route).toBe('/v1/token/:token');
      const all = h.logs().join('\n');
      expect(all).not.toContain(TEST_PAN);
      expect(all).not.toContain('Jane Doe');
    });
  });
});

describe('gateway behind trusted proxies', () => {
  it('uses the client address from X-Forwarded-For only when the peer is a trusted proxy', async () => {
    const h = await startHarness({ TRUSTED_PROXIES: ['127.0.0.1/32'] });
    try {
      const key = issueApiKey({ merchantId: 'm', mode: 'test', allowedCidrs: ['203.0.113.0/24'], pepper: TEST_PEPPER, now: new Date() });
      await h.store.create(key.record);
      const allowed = await h.app.request('GET', '/v1/token/tok.x', {
        headers: { 'x-api-key': key.apiKey, 'x-forwarded-for': '198.51.100.1, 203.0.113.9' },
      });
      expect(allowed.status).toBe(200);
      const denied = await h.app.request('GET', '/v1/token/tok.x', {
        headers: { 'x-api-key': key.apiKey, 'x-forwarded-for': '203.0.113.9, 198.51.100.1' },
      });
      expect(denied.status).toBe(401);
      expect(denied.headers['x-tessera-error']).toBe('ip_not_allowed');
    } finally {
      await h.app.close();
    }
  });
});
