import express from 'express';
import { createLogger, TesseraError } from '@tessera/common';
import type { ForwardResponse__Output } from '@tessera/protos';
import { issueApiKey, RedisApiKeyStore } from '@tessera/merchant-data';
import { aTokenRecord, anIdempotency, TEST_PEPPER } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { startApp, type RunningApp, type TestResponse } from '../../../../packages/edge/src/testing/http';
import { createApp } from './app';
import { installSecurityHeaders, SERVICE_SECURITY_HEADERS } from '@tessera/edge';
import type { ProxyApi, VaultApi } from '../app/ports';

const logger = createLogger('gateway-test', 'silent');
const db = useGatewayRedis();

const tokenRecord = aTokenRecord();

/** A PSP answer that is an HTML page meant to be framed (a 3-D Secure challenge), with its own policies. */
const pspAnswer: ForwardResponse__Output = {
  status: 200,
  headers: [
    { name: 'Content-Type', value: 'text/html; charset=utf-8' },
    { name: 'Content-Security-Policy', value: 'frame-ancestors https://shop.example' },
    { name: 'Cache-Control', value: 'private, max-age=60' },
  ],
  body: Buffer.from('<html>challenge</html>'),
  pspMs: 3,
};

const vault = {
  getToken: async (ref: { token: string }) => {
    if (ref.token !== tokenRecord.token) throw new TesseraError('token_not_found');
    return tokenRecord;
  },
  ready: async () => ({ ready: true, detail: '' }),
  close() {},
} as unknown as VaultApi;
const proxy = { forward: async () => pspAnswer, ready: async () => ({ ready: true, detail: '' }), close() {} } as unknown as ProxyApi;

async function gateway(hsts: number): Promise<{ app: RunningApp; apiKey: string }> {
  const keyStore = new RedisApiKeyStore(db.redis);
  const issued = issueApiKey({ merchantId: 'm', mode: 'test', allowedCidrs: [], pepper: TEST_PEPPER, now: new Date() });
  await keyStore.create(issued.record);
  const app = await startApp(
    createApp({
      config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: [], HSTS_MAX_AGE_SECONDS: hsts },
      logger,
      keyStore,
      pepper: TEST_PEPPER,
      idempotency: anIdempotency(db.redis),
      vault,
      proxy,
    }),
  );
  return { app, apiKey: issued.apiKey };
}

function expectServiceHeaders(res: TestResponse) {
  for (const [name, value] of Object.entries(SERVICE_SECURITY_HEADERS)) expect([name, res.headers[name]]).toEqual([name, value]);
}

describe('security headers', () => {
  let g: { app: RunningApp; apiKey: string };
  afterEach(async () => {
    await g.app.close();
  });

  it("puts nosniff, DENY framing, no-referrer and CSP default-src 'none' on every response the gateway makes", async () => {
    g = await gateway(0);
    const key = { 'x-api-key': g.apiKey };
    const responses = [
      await g.app.request('GET', '/healthz'),
      await g.app.request('GET', '/readyz'),
      await g.app.request('GET', '/v1/openapi.json'),
      await g.app.request('GET', `/v1/token/${tokenRecord.token}`, { headers: key }),
      await g.app.request('GET', '/v1/token/tok.nope', { headers: key }),
      await g.app.request('GET', '/v1/token/tok.nope'),
      await g.app.request('POST', '/v1/token', { headers: { ...key, 'content-type': 'application/json' }, body: '{"number":' }),
      await g.app.request('GET', '/v2/anything'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 404, 401, 400, 404]);
    for (const res of responses) {
      expectServiceHeaders(res);
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('adds to a passed-through PSP answer only nosniff (and HSTS when configured), keeping the PSP’s own policies', async () => {
    g = await gateway(31_536_000);
    const res = await g.app.request('POST', '/v1/proxy', {
      headers: { 'x-api-key': g.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'get', token: tokenRecord.token, pspUrl: 'https://psp.example/acs' }),
    });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('<html>challenge</html>');
    expect(res.headers['content-security-policy']).toBe('frame-ancestors https://shop.example');
    expect(res.headers['cache-control']).toBe('private, max-age=60');
    expect(res.headers['x-frame-options']).toBeUndefined();
    expect(res.headers['referrer-policy']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
  });

  it('sends Strict-Transport-Security on service responses when HSTS_MAX_AGE_SECONDS is set', async () => {
    g = await gateway(600);
    expect((await g.app.request('GET', '/healthz')).headers['strict-transport-security']).toBe('max-age=600');
    expect((await g.app.request('GET', '/v1/token/tok.x')).headers['strict-transport-security']).toBe('max-age=600');
  });

  it('never overrides a header a handler set, and keeps headers passed to writeHead', async () => {
    const app = express();
    installSecurityHeaders(app, { hstsMaxAgeSeconds: 0 });
    app.get('/own', (_req, res) => {
      res.setHeader('x-frame-options', 'SAMEORIGIN');
      res.end('x');
    });
    app.get('/head', (_req, res) => {
      res.writeHead(200, { 'referrer-policy': 'origin' });
      res.end('x');
    });
    g = { app: await startApp(app), apiKey: '' };
    const own = await g.app.request('GET', '/own');
    expect(own.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(own.headers['content-security-policy']).toBe(SERVICE_SECURITY_HEADERS['content-security-policy']);
    expect((await g.app.request('GET', '/head')).headers['referrer-policy']).toBe('origin');
  });
});
