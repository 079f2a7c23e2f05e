import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Tessera } from './client';
import {
  TesseraAuthenticationError,
  TesseraCardDataError,
  TesseraConnectionError,
  TesseraPspError,
  TesseraRateLimitError,
  TesseraServerError,
  TesseraTimeoutError,
} from './errors';

/**
 * The client's own behaviour (headers, error mapping, timeouts) against a scripted HTTP server
 * on loopback. Its behaviour against the real services is in test/integration/sdk.test.ts.
 */

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Reply = (req: Seen, res: http.ServerResponse) => void;

let server: http.Server;
let baseUrl: string;
let seen: Seen[];
let reply: Reply;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(s);
      reply(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

beforeEach(() => {
  seen = [];
  reply = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  };
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function envelope(status: number, type: string, code: string, extra: Record<string, string> = {}): Reply {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-tessera-error': code, ...extra });
    res.end(JSON.stringify({ error: { type, code, message: `m ${code}`, param: 'number', requestId: 'req_1' } }));
  };
}

describe('Tessera client', () => {
  it('sends the API key given at initialisation, JSON, and the idempotency key and request id when asked', async () => {
    const tessera = new Tessera('tsk_test_abc', { baseUrl });
    await tessera.tokens.create(
      { number: '4242424242424242', expiryMonth: 12, expiryYear: 2030 },
      { idempotencyKey: 'order-1', requestId: 'r-1' },
    );
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/token' });
    expect(seen[0]?.headers).toMatchObject({
      'x-api-key': 'tsk_test_abc',
      'content-type': 'application/json',
      'idempotency-key': 'order-1',
      'x-request-id': 'r-1',
    });
    expect(JSON.parse(seen[0]!.body)).toEqual({ number: '4242424242424242', expiryMonth: 12, expiryYear: 2030 });
  });

  it('creates, retrieves and lists form sessions', async () => {
    const tessera = new Tessera('tsk_test_abc', { baseUrl });
    const id = `fs_${'A'.repeat(32)}`;
    reply = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'form_session', amount: 1234 }));
    };
    const created = await tessera.formSessions.create(
      { returnUrl: 'https://shop.test/done', amount: 1234, currency: 'eur', completionUrl: 'https://shop.test/complete' },
      { idempotencyKey: 'order-7' },
    );
    expect(created).toMatchObject({ id, amount: 1234 });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/form-sessions' });
    expect(JSON.parse(seen[0]?.body ?? '')).toMatchObject({ amount: 1234, currency: 'eur' });
    expect(seen[0]?.headers['idempotency-key']).toBe('order-7');
    await tessera.formSessions.retrieve(id);
    expect(seen[1]).toMatchObject({ method: 'GET', url: `/v1/form-sessions/${id}` });
    await tessera.formSessions.list({ limit: 5, startingAfter: id, status: 'completed' });
    expect(seen[2]).toMatchObject({ method: 'GET', url: `/v1/form-sessions?limit=5&startingAfter=${id}&status=completed` });
    await tessera.formSessions.list();
    expect(seen[3]).toMatchObject({ method: 'GET', url: '/v1/form-sessions' });
    await expect(tessera.formSessions.retrieve('../token/tok.x')).rejects.toThrow(/form session id/);
    expect(seen).toHaveLength(4);
  });

  it('creates, retrieves, lists, deletes webhook endpoints and rotates their secret', async () => {
    const tessera = new Tessera('tsk_test_abc', { baseUrl });
    reply = (req, res) => {
      res.writeHead(req.method === 'DELETE' ? 204 : 200, { 'content-type': 'application/json' });
      res.end(req.method === 'DELETE' ? '' : JSON.stringify({ id: 'we_1', object: 'webhook_endpoint', secret: 'whsec_x' }));
    };
    const created = await tessera.webhookEndpoints.create(
      { url: 'https://shop.test/hooks', enabledEvents: ['token.created'] },
      { idempotencyKey: 'k1' },
    );
    expect(created).toMatchObject({ id: 'we_1', secret: 'whsec_x' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/webhook-endpoints' });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ url: 'https://shop.test/hooks', enabledEvents: ['token.created'] });
    expect(seen[0]?.headers['idempotency-key']).toBe('k1');
    await tessera.webhookEndpoints.retrieve('we_1');
    await tessera.webhookEndpoints.list();
    await tessera.webhookEndpoints.rotateSecret('we_1', { expiresInSeconds: 60 });
    await tessera.webhookEndpoints.del('we/1');
    expect(seen.slice(1).map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      'GET /v1/webhook-endpoints/we_1 ',
      'GET /v1/webhook-endpoints ',
      'POST /v1/webhook-endpoints/we_1/rotate-secret {"expiresInSeconds":60}',
      'DELETE /v1/webhook-endpoints/we%2F1 ',
    ]);
    await expect(tessera.webhookEndpoints.retrieve('')).rejects.toThrow(/needs an id/);
  });

  it('lists events with filters and retrieves one', async () => {
    const tessera = new Tessera('tsk_test_abc', { baseUrl });
    reply = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [], hasMore: false }));
    };
    expect(await tessera.events.list({ type: 'token.created', limit: 3, startingAfter: 'evt_9' })).toEqual({
      object: 'list',
      data: [],
      hasMore: false,
    });
    await tessera.events.list();
    await tessera.events.retrieve('evt_1');
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /v1/events?type=token.created&limit=3&startingAfter=evt_9',
      'GET /v1/events',
      'GET /v1/events/evt_1',
    ]);
  });

  it('opens a CVC session with a POST and no body, and returns the grant', async () => {
    const grant = { object: 'cvc_session', token: 'tok.a/b', secret: `cvcs_${'A'.repeat(43)}`, expiresAt: '2030-01-01T00:10:00.000Z' };
    reply = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(grant));
    };
    expect(await new Tessera('k', { baseUrl }).tokens.openCvcSession('tok.a/b')).toEqual(grant);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/token/tok.a%2Fb/cvc-sessions', body: '' });
  });

  it('appends /v1 to a base URL without a version and escapes tokens in paths', async () => {
    const tessera = new Tessera('k', { baseUrl: baseUrl.replace(/\/v1$/, '/') });
    await tessera.tokens.get('tok.a/b');
    expect(seen[0]?.url).toBe('/v1/token/tok.a%2Fb');
  });

  it('retains a token with a POST and no body, and returns the record', async () => {
    reply = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ token: 'tok.a/b', provisional: false }));
    };
    const record = await new Tessera('k', { baseUrl }).tokens.retain('tok.a/b');
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/token/tok.a%2Fb/retain', body: '' });
    expect(seen[0]?.headers['content-type']).toBeUndefined();
    expect(record).toEqual({ token: 'tok.a/b', provisional: false });
  });

  it('never shows the API key when the client is printed or serialised', () => {
    const tessera = new Tessera('tsk_test_secret', { baseUrl });
    expect(JSON.stringify(tessera)).not.toContain('tsk_test_secret');
    expect(require('node:util').inspect(tessera)).not.toContain('tsk_test_secret');
  });

  it.each([
    [401, 'authentication_error', 'api_key_invalid', TesseraAuthenticationError],
    [422, 'card_data_error', 'cvv_unavailable', TesseraCardDataError],
    [500, 'api_error', 'internal_error', TesseraServerError],
  ])('turns a %s %s envelope into a typed error with every field', async (status, type, code, ErrorClass) => {
    reply = envelope(status, type, code);
    const err = await new Tessera('k', { baseUrl }).tokens.get('tok.x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ErrorClass);
    expect(err).toMatchObject({ status, type, code, message: `m ${code}`, param: 'number', requestId: 'req_1' });
  });

  it('reads Retry-After into a rate limit error', async () => {
    reply = envelope(429, 'rate_limit_error', 'rate_limited', { 'retry-after': '7' });
    const err = await new Tessera('k', { baseUrl }).tokens.get('tok.x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraRateLimitError);
    expect((err as TesseraRateLimitError).retryAfterSeconds).toBe(7);
  });

  it('returns a PSP error status from proxy.forward instead of throwing, with body helpers and timings', async () => {
    reply = (_req, res) => {
      res.writeHead(402, {
        'content-type': 'application/json',
        'x-tessera-request-id': 'req_9',
        'x-tessera-psp-ms': '12.5',
        'x-tessera-total-ms': '20.1',
      });
      res.end('{"status":"declined"}');
    };
    const res = await new Tessera('k', { baseUrl }).proxy.forward({ method: 'post', token: 'tok.x', pspUrl: 'https://psp.example/' });
    expect(res.status).toBe(402);
    expect(res.json()).toEqual({ status: 'declined' });
    expect(res.text()).toBe('{"status":"declined"}');
    expect(res).toMatchObject({ requestId: 'req_9', pspMs: 12.5, totalMs: 20.1 });
  });

  it('throws for a proxy error made by Tessera (x-tessera-error), not a PSP answer', async () => {
    reply = envelope(504, 'psp_error', 'psp_timeout');
    const err = await new Tessera('k', { baseUrl }).proxy
      .forward({ method: 'post', token: 'tok.x', pspUrl: 'https://psp.example/' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 504, code: 'psp_timeout' });
  });

  it('throws psp_outcome_unknown as a PSP error after one request: the SDK never retries a call that may have charged', async () => {
    reply = envelope(502, 'psp_error', 'psp_outcome_unknown');
    const err = await new Tessera('k', { baseUrl }).proxy
      .forward({ method: 'post', token: 'tok.x', pspUrl: 'https://psp.example/' }, { idempotencyKey: 'order-1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraPspError);
    expect(err).toMatchObject({ status: 502, code: 'psp_outcome_unknown' });
    expect(seen).toHaveLength(1);
  });

  it('describes a non-envelope error answer as unexpected_response', async () => {
    reply = (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    };
    const err = await new Tessera('k', { baseUrl }).tokens.get('tok.x').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, code: 'unexpected_response' });
  });

  it('gives up after timeoutMs with a timeout error', async () => {
    reply = () => undefined; // never answers
    const started = Date.now();
    const err = await new Tessera('k', { baseUrl, timeoutMs: 200 }).tokens.get('tok.x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraTimeoutError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('reports a refused connection as a connection error', async () => {
    const err = await new Tessera('k', { baseUrl: 'http://127.0.0.1:1/v1' }).tokens.get('tok.x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TesseraConnectionError);
  });

  it('refuses to start without an API key', () => {
    expect(() => new Tessera('')).toThrow(TypeError);
  });

  it('refuses a publishable key, which every route it calls would answer with 403', () => {
    expect(() => new Tessera(`tpk_test_${'A'.repeat(38)}`)).toThrow(/secret key \(tsk_/);
  });
});
