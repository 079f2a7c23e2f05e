import pino from 'pino';
import { Registry } from 'prom-client';
import { TesseraError } from '@tessera/common';
import { parseRouteDocument, type StoredRoute } from '@tessera/routes';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import type { UpstreamAnswer, UpstreamRequest } from '../app/ports';
import { createInboundApp } from './inboundApp';

const ROUTE = parseRouteDocument({
  id: 'checkout',
  kind: 'inbound',
  mode: 'test',
  inbound: { path: '/checkout', upstream: 'https://shop.example/orders' },
  filters: [{ location: 'json', pointer: '/number', store: 'number' }],
});
const STORED: StoredRoute = { route: ROUTE, createdAt: '', updatedAt: '' };

describe('the inbound listener', () => {
  let app: RunningApp;
  const forwarded: UpstreamRequest[] = [];
  let answer: () => Promise<UpstreamAnswer>;
  const metrics = new Registry();

  beforeAll(async () => {
    app = await startApp(
      createInboundApp({
        inbound: {
          routes: {
            ownerOf: async (address) => (address === 'path:/checkout' ? { merchantId: 'acme', routeId: 'checkout' } : undefined),
            route: async () => STORED,
          },
          vault: { tokenize: () => Promise.reject(new Error('no card in these tests')) },
          upstream: {
            forward: async (request) => {
              forwarded.push(request);
              return answer();
            },
          },
          cardTesting: { admitRequest: async () => undefined, admitCard: async () => undefined },
          now: () => new Date(),
        },
        logger: pino({ level: 'silent' }),
        metrics,
        maxBodyBytes: 64,
        trustedProxies: [],
        readyChecks: { redis: async () => true, vault: async () => true, proxy: async () => false },
      }),
    );
  });
  afterAll(() => app.close());

  it('passes the upstream’s status, headers (hop-by-hop ones dropped) and body on as they come', async () => {
    answer = async () => ({
      status: 418,
      headers: [
        { name: 'Content-Type', value: 'text/plain' },
        { name: 'Set-Cookie', value: 'a=1' },
        { name: 'Set-Cookie', value: 'b=2' },
        { name: 'Connection', value: 'x-private' },
        { name: 'Keep-Alive', value: 'timeout=5' },
      ],
      body: (async function* () {
        yield Buffer.from('first ');
        yield Buffer.from('second');
      })(),
    });
    const res = await app.request('POST', '/checkout/a?b=1', {
      headers: { 'content-type': 'text/plain', connection: 'keep-alive, x-hop', 'x-hop': 'gone', 'x-kept': 'yes' },
      body: 'hello',
    });
    expect(res.status).toBe(418);
    expect(res.body.toString()).toBe('first second');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.headers['x-tessera-error']).toBeUndefined();
    expect(res.rawHeaders.map((h) => h.toLowerCase())).not.toContain('x-private');
    const sent = forwarded.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', url: 'https://shop.example/orders/a?b=1', body: Buffer.from('hello') });
    expect(sent.headers.map((h) => h.name.toLowerCase())).toEqual(
      expect.arrayContaining(['content-type', 'x-kept', 'x-forwarded-for', 'x-forwarded-proto']),
    );
    expect(sent.headers.map((h) => h.name.toLowerCase())).not.toEqual(expect.arrayContaining(['x-hop']));
    expect(sent.headers.map((h) => h.name.toLowerCase())).not.toContain('host');
  });

  it('answers its own refusals in the envelope, with x-tessera-error and the request id', async () => {
    const big = await app.request('POST', '/checkout', { body: 'x'.repeat(65) });
    expect(big.status).toBe(413);
    expect(big.json()).toMatchObject({ error: { code: 'body_too_large', type: 'invalid_request_error', requestId: expect.any(String) } });
    answer = () => Promise.reject(new TesseraError('psp_timeout'));
    const slow = await app.request('GET', '/checkout');
    expect({ status: slow.status, code: slow.headers['x-tessera-error'] }).toEqual({ status: 504, code: 'psp_timeout' });
    const none = await app.request('GET', '/elsewhere', { headers: { 'x-request-id': 'req_given_1' } });
    expect(none.json()).toMatchObject({ error: { code: 'route_not_found', requestId: 'req_given_1' } });
  });

  it('says which dependency is not ready, and counts outcomes without a path or merchant', async () => {
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json()).toEqual({ status: 'unavailable', checks: { redis: 'ok', vault: 'ok', proxy: 'unavailable' } });
    expect((await app.request('GET', '/healthz')).status).toBe(200);
    const text = await metrics.metrics();
    expect(text).toMatch(/tessera_inbound_requests_total\{outcome="route_not_found",status="404"\} 1/);
    expect(text).not.toMatch(/acme|checkout|elsewhere/);
  });
});
