import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { TesseraError } from '@tessera/common';
import { createDestinationPolicy, parseCidrList } from '../domain/destinationPolicy';
import {
  cancelPspExchange,
  closePspEgress,
  createPspEgress,
  preflightDestination,
  sendToPsp,
  toPspError,
  type EgressOptions,
  type PspCancellation,
  type PspEgress,
} from './pspEgress';
import { resolveHost, type Resolver } from './resolver';
import { createSafeConnector } from './safeConnector';

/** A real HTTP server on a loopback address that counts the TCP connections it accepts. */
interface TestServer {
  host: string;
  port: number;
  connections: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[]; body: Buffer }>;
  close(): Promise<void>;
}

async function startServer(host: string, handler: http.RequestListener = (_req, res) => res.end('ok'), port = 0): Promise<TestServer> {
  const state: TestServer = { host, port: 0, connections: 0, requests: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      });
      handler(req, res);
    });
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  state.port = (server.address() as AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

/** 127.0.0.1 allowed; the test servers listen on ephemeral ports (the port rule has its own tests, egressPolicy.test.ts). */
const policy = createDestinationPolicy({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: 1, to: 65535 }] });
const egresses: PspEgress[] = [];
const servers: TestServer[] = [];

function egress(overrides: Partial<EgressOptions> = {}): PspEgress {
  const e = createPspEgress({
    connectTimeoutMs: 2000,
    timeoutMs: 3000,
    maxResponseBytes: 1024 * 1024,
    policy,
    ...overrides,
  });
  egresses.push(e);
  return e;
}

async function server(host: string, handler?: http.RequestListener, port?: number): Promise<TestServer> {
  const s = await startServer(host, handler, port);
  servers.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(egresses.splice(0).map((e) => closePspEgress(e).catch(() => undefined)));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function pspError(promise: Promise<unknown>): Promise<TesseraError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

/**
 * Sends as if the pre-flight had passed whatever DNS answered: these tests check what the
 * connector refuses on its own, at connect time.
 */
async function send(e: PspEgress, url: string, extra: Partial<Parameters<typeof sendToPsp>[1]> = {}) {
  const destination = policy.checkUrl(url, 'test', []);
  return sendToPsp(e, {
    destination: { ...destination, addresses: await resolveHost(destination.hostname, e.resolve) },
    method: 'POST',
    headers: [],
    ...extra,
  });
}

describe('sendToPsp destination enforcement', () => {
  it('refuses a loopback address outside the allowlist without ever connecting to it', async () => {
    const forbidden = await server('127.0.0.2');
    const err = await pspError(send(egress(), `http://127.0.0.2:${forbidden.port}/charge`));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.message).toBe('pspUrl points to a loopback address.');
    expect(forbidden.connections).toBe(0);
  });

  it('refuses a host name that resolves to a forbidden address without connecting', async () => {
    const forbidden = await server('127.0.0.2');
    const resolve: Resolver = async () => [{ address: '127.0.0.2', family: 4 }];
    const err = await pspError(send(egress({ resolve }), `http://psp.test:${forbidden.port}/charge`));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.message).toBe('The pspUrl host resolves to a loopback address.');
    expect(forbidden.connections).toBe(0);
  });

  it('connects to the addresses the pre-flight checked, never to a later DNS answer (rebinding)', async () => {
    const psp = await server('127.0.0.1', (_req, res) => res.end('psp'));
    const internal = await server('127.0.0.2', (_req, res) => res.end('internal'), psp.port);
    let calls = 0;
    const resolve: Resolver = async () => (++calls === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '127.0.0.2', family: 4 }]);
    const e = egress({ resolve });

    const destination = await preflightDestination(e, policy.checkUrl(`http://psp.test:${psp.port}/charge`, 'test', []));
    const res = await sendToPsp(e, { destination, method: 'POST', headers: [], body: Buffer.from('card data') });

    expect(res.status).toBe(200);
    expect(psp.requests.map((r) => r.body.toString())).toEqual(['card data']);
    expect(calls).toBe(1);
    expect(internal.connections).toBe(0);
    // Held only while the exchange ran: the next request's pre-flight asks DNS again.
    expect(e.pins.get('psp.test')).toBeUndefined();
  });

  it('refuses at connect time when DNS answers differently after the pre-check passed and no answer is pinned (rebinding)', async () => {
    const target = await server('127.0.0.2', (_req, res) => res.end('internal'));
    let calls = 0;
    const resolve: Resolver = async () => (++calls === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '127.0.0.2', family: 4 }]);
    const e = egress({ resolve });
    const destination = policy.checkUrl(`http://psp.test:${target.port}/charge`, 'test', []);

    await expect(preflightDestination(e, destination)).resolves.toMatchObject({ addresses: [{ address: '127.0.0.1', family: 4 }] });
    // A connection undici opens once its request no longer holds the pre-flight's answer looks the host up again.
    const unpinned = new Agent({ connect: createSafeConnector({ policy, resolve, connectTimeoutMs: 2000 }) });
    const err = await pspError(
      unpinned.request({ origin: destination.url.origin, path: '/charge', method: 'POST', body: 'card data' }).catch((cause: unknown) => {
        throw toPspError(cause);
      }),
    );
    await unpinned.close();

    expect(err.code).toBe('psp_destination_forbidden');
    expect(calls).toBe(2);
    expect(target.connections).toBe(0);
  });

  it('the connector re-checks the peer address after connecting and destroys a forbidden socket', async () => {
    const forbidden = await server('127.0.0.2');
    // Stands for any path that bypasses the lookup check: the base connector ignores it and
    // connects straight to 127.0.0.2, so only the after-connect peer check can refuse.
    let socket: net.Socket | undefined;
    const connect = createSafeConnector({
      policy,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      connectTimeoutMs: 2000,
      baseConnector: (_opts, callback) => {
        const s = net.connect({ host: '127.0.0.2', port: forbidden.port });
        socket = s;
        s.once('connect', () => callback(null, s));
        s.once('error', (err) => callback(err, null));
      },
    });
    const result = await new Promise<{ err: Error | null; socket: unknown }>((resolve) => {
      connect({ hostname: 'psp.test', protocol: 'http:', port: String(forbidden.port) }, (err, s) => resolve({ err, socket: s }));
    });
    expect(result.err).toBeInstanceOf(TesseraError);
    expect((result.err as TesseraError).code).toBe('psp_destination_forbidden');
    expect(result.socket).toBeNull();
    expect(socket?.destroyed).toBe(true);
  });

  it('the connector hands out a socket whose peer is allowed', async () => {
    const psp = await server('127.0.0.1');
    const connect = createSafeConnector({
      policy,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      connectTimeoutMs: 2000,
    });
    const result = await new Promise<{ err: Error | null; socket: net.Socket | null }>((resolve) => {
      connect({ hostname: 'psp.test', protocol: 'http:', port: String(psp.port) }, (err, s) =>
        resolve({ err, socket: s as net.Socket | null }),
      );
    });
    expect(result.err).toBeNull();
    expect(result.socket?.remoteAddress).toBe('127.0.0.1');
    result.socket?.destroy();
  });

  it('pre-check maps a DNS failure to psp_unreachable', async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const err = await pspError(preflightDestination(egress({ resolve }), policy.checkUrl('https://nowhere.invalid/', 'live', [])));
    expect(err.code).toBe('psp_unreachable');
  });

  it('pre-check refuses a host when one of several DNS answers is forbidden', async () => {
    const resolve: Resolver = async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    const err = await pspError(preflightDestination(egress({ resolve }), policy.checkUrl('https://psp.example/', 'live', [])));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.message).toBe('The pspUrl host resolves to a link-local address.');
  });
});

describe('sendToPsp exchange', () => {
  it('passes status, headers in order (repeats kept) and exact body bytes back', async () => {
    const bytes = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7b]);
    const psp = await server('127.0.0.1', (_req, res) => {
      res.writeHead(402, [
        ['Set-Cookie', 'a=1'],
        ['X-Psp', 'declined'],
        ['Set-Cookie', 'b=2'],
        ['Content-Type', 'application/octet-stream'],
        ['Connection', 'keep-alive'],
      ]);
      res.end(bytes);
    });
    const res = await send(egress(), `http://127.0.0.1:${psp.port}/charge?x=1`, {
      headers: [
        { name: 'Authorization', value: 'Bearer sk_test' },
        { name: 'Content-Type', value: 'application/json' },
      ],
      body: Buffer.from('{"n":"4242"}'),
    });
    expect(res.status).toBe(402);
    expect(res.body.equals(bytes)).toBe(true);
    expect(res.headers.filter((h) => h.name.toLowerCase() !== 'date')).toEqual([
      { name: 'Set-Cookie', value: 'a=1' },
      { name: 'X-Psp', value: 'declined' },
      { name: 'Set-Cookie', value: 'b=2' },
      { name: 'Content-Type', value: 'application/octet-stream' },
    ]);
    expect(res.pspMs).toBeGreaterThan(0);
    const seen = psp.requests[0];
    expect(seen?.method).toBe('POST');
    expect(seen?.url).toBe('/charge?x=1');
    expect(seen?.headers.authorization).toBe('Bearer sk_test');
    expect(seen?.headers['content-length']).toBe('12');
    expect(seen?.body.toString()).toBe('{"n":"4242"}');
  });

  it('does not follow redirects: a 3xx comes back as it is', async () => {
    const psp = await server('127.0.0.1', (req, res) => {
      if (req.url === '/start') res.writeHead(302, { Location: '/elsewhere' }).end();
      else res.end('followed');
    });
    const res = await send(egress(), `http://127.0.0.1:${psp.port}/start`, { method: 'GET' });
    expect(res.status).toBe(302);
    expect(res.headers).toContainEqual({ name: 'Location', value: '/elsewhere' });
    expect(psp.requests.map((r) => r.url)).toEqual(['/start']);
  });

  it('answers psp_timeout when the PSP does not answer within the total time', async () => {
    const psp = await server('127.0.0.1', () => undefined);
    const started = Date.now();
    const err = await pspError(send(egress({ timeoutMs: 300 }), `http://127.0.0.1:${psp.port}/slow`));
    expect(err.code).toBe('psp_timeout');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers psp_timeout when the body trickles past the total time', async () => {
    const psp = await server('127.0.0.1', (_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(timer));
    });
    const err = await pspError(send(egress({ timeoutMs: 400 }), `http://127.0.0.1:${psp.port}/trickle`));
    expect(err.code).toBe('psp_timeout');
  });

  it('answers psp_unreachable when nothing listens on the port', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const err = await pspError(send(egress(), `http://127.0.0.1:${port}/`));
    expect(err.code).toBe('psp_unreachable');
  });

  it('answers psp_unreachable when the PSP closes the connection mid-response', async () => {
    const psp = await server('127.0.0.1', (_req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const err = await pspError(send(egress(), `http://127.0.0.1:${psp.port}/`));
    expect(err.code).toBe('psp_unreachable');
  });

  it('answers psp_unreachable when the TLS handshake fails', async () => {
    const psp = await server('127.0.0.1');
    const err = await pspError(send(egress(), `https://127.0.0.1:${psp.port}/`));
    expect(err.code).toBe('psp_unreachable');
  });

  it('answers psp_response_too_large for a chunked body over the limit', async () => {
    const psp = await server('127.0.0.1', (_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(600));
      res.end(Buffer.alloc(600));
    });
    const err = await pspError(send(egress({ maxResponseBytes: 1000 }), `http://127.0.0.1:${psp.port}/big`));
    expect(err.code).toBe('psp_response_too_large');
  });

  it('answers psp_response_too_large when Content-Length announces too much', async () => {
    const psp = await server('127.0.0.1', (_req, res) => {
      res.writeHead(200, { 'Content-Length': '5000' });
      res.end(Buffer.alloc(5000));
    });
    const err = await pspError(send(egress({ maxResponseBytes: 1000 }), `http://127.0.0.1:${psp.port}/big`));
    expect(err.code).toBe('psp_response_too_large');
  });

  it('accepts a body of exactly the limit', async () => {
    const psp = await server('127.0.0.1', (_req, res) => res.end(Buffer.alloc(1000, 1)));
    const res = await send(egress({ maxResponseBytes: 1000 }), `http://127.0.0.1:${psp.port}/`);
    expect(res.body.length).toBe(1000);
  });

  it('returns a body that arrives in several chunks whole and in order', async () => {
    const psp = await server('127.0.0.1', (_req, res) => {
      res.writeHead(200);
      res.write('first,');
      setTimeout(() => res.write('second,'), 20);
      setTimeout(() => res.end('third'), 40);
    });
    const res = await send(egress(), `http://127.0.0.1:${psp.port}/`);
    expect(res.body.toString()).toBe('first,second,third');
  });

  it('stops the exchange when the caller cancels: psp_unreachable, and the PSP connection is closed', async () => {
    let pspSocketClosed: Promise<void> | undefined;
    const psp = await server('127.0.0.1', (req) => {
      pspSocketClosed = new Promise((resolve) => req.socket.once('close', () => resolve()));
    });
    const cancellation: PspCancellation = { cancelled: false };
    const pending = pspError(send(egress({ timeoutMs: 10_000 }), `http://127.0.0.1:${psp.port}/`, { cancellation }));
    while (psp.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    cancelPspExchange(cancellation);
    const err = await pending;
    expect(err.code).toBe('psp_unreachable');
    expect(err.message).toBe('The request was cancelled.');
    await pspSocketClosed;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(cancellation.onCancel).toBeUndefined();
  });

  it('does not contact the PSP when the caller cancelled before the exchange', async () => {
    const psp = await server('127.0.0.1');
    const err = await pspError(send(egress(), `http://127.0.0.1:${psp.port}/`, { cancellation: { cancelled: true } }));
    expect(err.message).toBe('The request was cancelled.');
    expect(psp.connections).toBe(0);
  });

  it('reuses one kept-alive connection for consecutive requests to the same PSP', async () => {
    const psp = await server('127.0.0.1');
    const e = egress();
    await send(e, `http://127.0.0.1:${psp.port}/1`);
    // undici marks the connection idle a tick after the body ends.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await send(e, `http://127.0.0.1:${psp.port}/2`);
    expect(psp.requests).toHaveLength(2);
    expect(psp.connections).toBe(1);
  });
});
