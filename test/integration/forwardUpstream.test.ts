/**
 * Issue 28 (ADR 0013, point 2): an inbound route's rewritten request reaches the merchant's
 * upstream through the proxy's ForwardUpstream, which only the inbound service's identity may call
 * (TLS_PEER_INBOUND), under the destination policy of every call out, after checking that no card
 * number is left in it; the answer streams back, head first. A real proxy over mutual TLS, the
 * client helper the inbound service uses, an upstream on loopback.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { TesseraError } from '@tessera/common';
import {
  clientCredentials,
  createProxyClient,
  devTlsFiles,
  forwardUpstream,
  generateDevCertificates,
  readTlsMaterial,
  tlsChannelOptions,
  upstreamCallToWire,
  type ProxyClient,
  type UpstreamCall,
} from '@tessera/protos';
import { useStack } from './harness';

jest.setTimeout(120_000);

const env = useStack({ tls: true, serviceEnv: { proxy: { TLS_PEER_INBOUND: 'inbound' } } });

/** What the upstream got: method, path and query, headers as sent, body. */
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A promise and the function that settles it, for steps the test and the upstream wait on. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire = (): void => undefined;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

/** A card_bin_last4 alias as the inbound service writes it: Luhn-valid, the card's BIN and last four. */
const ALIAS = '4242421000084242';

const LARGE_BYTES = 16 * 1024 * 1024 + 123;
const large = Buffer.alloc(LARGE_BYTES);
for (let i = 0; i < LARGE_BYTES; i++) large[i] = (i * 31 + (i >> 12)) & 0xff;
const largeDigest = createHash('sha256').update(large).digest('hex');

let firstChunkSeen = signal();
let hangingClosed = signal();
let upstream: http.Server;
let origin = '';
const received: Received[] = [];

beforeAll(async () => {
  generateDevCertificates(env.stack.certDir as string, ['inbound']);
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      const path = (req.url ?? '').split('?')[0];
      if (path === '/large') {
        // The first piece, then the rest only once the caller has seen it: the answer must be on
        // its way before the upstream has finished.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write(large.subarray(0, 1000));
        void firstChunkSeen.promise.then(() => res.end(large.subarray(1000)));
      } else if (path === '/redirect') {
        res.writeHead(302, { location: `${origin}/landing` }).end();
      } else if (path === '/hanging') {
        res.on('close', () => hangingClosed.fire());
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first');
      } else if (path === '/silent') {
        // Never answers (the proxy's wait for the head ends it).
      } else if (path === '/stalling') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first');
      } else {
        res.writeHead(201, {
          'content-type': 'application/json',
          'x-upstream': 'yes',
          connection: 'x-upstream-private, keep-alive',
          'x-upstream-private': 'for this hop',
          'keep-alive': 'timeout=5',
        });
        res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ ok: true, method: req.method }));
      }
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

const clients: ProxyClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

/** A proxy client as the named service builds it: its own certificate, the proxy's name expected. */
function proxyAs(service: 'inbound' | 'fields' | 'gateway'): ProxyClient {
  const tls = readTlsMaterial(devTlsFiles(env.stack.certDir as string, service));
  const client = createProxyClient(env.stack.env.PROXY_ADDR as string, clientCredentials(tls), tlsChannelOptions(tls, 'proxy'));
  clients.push(client);
  return client;
}

let inboundClient: ProxyClient | undefined;
const inbound = (): ProxyClient => (inboundClient ??= proxyAs('inbound'));

function upstreamCall(over: Partial<UpstreamCall> = {}): UpstreamCall {
  return {
    merchantId: 'shop',
    routeId: 'rt_checkout',
    mode: 'test',
    method: 'POST',
    url: `${origin}/orders?ref=tok.AAAAAAAAAAAAAAAAAAAAAA`,
    headers: [{ name: 'content-type', value: 'application/json' }],
    body: Buffer.from(`{"card":"${ALIAS}","last4":"4242"}`),
    timeoutMs: 5000,
    cardAliases: [ALIAS],
    ...over,
  };
}

async function bodyOf(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function refusalOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return err instanceof TesseraError ? err.code : String(err);
  }
  return 'ok';
}

describe('ForwardUpstream', () => {
  it('sends the request to the upstream and streams its answer back, head first, hop-by-hop headers dropped both ways', async () => {
    const before = received.length;
    const answer = await forwardUpstream(
      inbound(),
      upstreamCall({
        headers: [
          { name: 'content-type', value: 'application/json' },
          { name: 'x-shop', value: 'kept' },
          { name: 'connection', value: 'x-hop-secret' },
          { name: 'x-hop-secret', value: 'for this hop' },
          { name: 'keep-alive', value: 'timeout=5' },
          { name: 'te', value: 'trailers' },
          { name: 'proxy-authorization', value: 'Basic eDp5' },
        ],
      }),
      { requestId: 'req_upstream_1' },
    );
    expect(answer.status).toBe(201);
    const names = answer.headers.map((h) => h.name.toLowerCase());
    expect(answer.headers).toEqual(expect.arrayContaining([{ name: 'x-upstream', value: 'yes' }]));
    for (const hop of ['connection', 'keep-alive', 'x-upstream-private', 'transfer-encoding', 'content-length'])
      expect(names).not.toContain(hop);
    expect(JSON.parse((await bodyOf(answer.body)).toString())).toEqual({ ok: true, method: 'POST' });

    const got = received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      method: 'POST',
      url: '/orders?ref=tok.AAAAAAAAAAAAAAAAAAAAAA',
      body: `{"card":"${ALIAS}","last4":"4242"}`,
    });
    expect(got[0]?.headers['x-shop']).toBe('kept');
    for (const hop of ['x-hop-secret', 'keep-alive', 'te', 'proxy-authorization']) expect(got[0]?.headers).not.toHaveProperty(hop);
  });

  it('passes every method through, with its body, and answers HEAD without one', async () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND']) {
      const before = received.length;
      const withBody = !['GET', 'HEAD'].includes(method);
      const answer = await forwardUpstream(
        inbound(),
        upstreamCall({ method, url: `${origin}/things/1`, body: Buffer.from(withBody ? `{"m":"${method}"}` : '') }),
      );
      const body = await bodyOf(answer.body);
      expect({ method, status: answer.status }).toEqual({ method, status: 201 });
      if (method === 'HEAD') expect(body.length).toBe(0);
      else expect(JSON.parse(body.toString())).toEqual({ ok: true, method });
      expect(received.slice(before).map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
        `${method} /things/1 ${withBody ? `{"m":"${method}"}` : ''}`,
      ]);
    }
  });

  it('streams a large answer as it arrives, intact, past the size limit of whole PSP answers', async () => {
    firstChunkSeen = signal();
    const answer = await forwardUpstream(inbound(), upstreamCall({ method: 'GET', url: `${origin}/large`, body: Buffer.alloc(0) }));
    expect(answer.status).toBe(200);
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of answer.body) {
      // The upstream sends the rest only after this: the body arrives while it is still being written.
      if (bytes === 0) firstChunkSeen.fire();
      hash.update(chunk);
      bytes += chunk.length;
    }
    expect(bytes).toBe(LARGE_BYTES);
    expect(hash.digest('hex')).toBe(largeDigest);
  });

  it('refuses a request that still holds a card number, in its body or its query, and never calls the upstream', async () => {
    const before = received.length;
    const cases: Partial<UpstreamCall>[] = [
      { body: Buffer.from('{"card":"4242 4242 4242 4242","cvc":"123"}') },
      // The alias the inbound service listed passes; a card beside it does not.
      { body: Buffer.from(`{"card":"${ALIAS}","other":"4000056655665556"}`) },
      // An alias not listed looks like any card.
      { cardAliases: [] },
      {
        headers: [{ name: 'content-type', value: 'application/x-www-form-urlencoded' }],
        body: Buffer.from('number=4242%204242%204242%204242'),
      },
      { url: `${origin}/orders?pan=4000056655665556` },
      { method: 'GET', url: `${origin}/orders?pan=4242%2D4242%2D4242%2D4242`, body: Buffer.alloc(0) },
    ];
    for (const over of cases) expect(await refusalOf(forwardUpstream(inbound(), upstreamCall(over)))).toBe('card_data_unmatched');
    expect(received.length).toBe(before);
    for (const pan of ['4242 4242 4242 4242', '4242424242424242', '4000056655665556']) expect(env.stack.logs()).not.toContain(pan);
  });

  it('answers a redirect as it is and never follows it', async () => {
    const before = received.length;
    const answer = await forwardUpstream(inbound(), upstreamCall({ url: `${origin}/redirect` }));
    expect(answer.status).toBe(302);
    expect(answer.headers).toEqual(expect.arrayContaining([{ name: 'location', value: `${origin}/landing` }]));
    await bodyOf(answer.body);
    expect(received.slice(before).map((r) => r.url)).toEqual(['/redirect']);
  });

  it('refuses destinations the policy does not allow: a private or metadata address, a port outside the list, http with a live key', async () => {
    for (const url of ['http://10.0.0.1:8080/orders', 'http://169.254.169.254/latest/meta-data', 'http://127.0.0.1:22/orders']) {
      expect(await refusalOf(forwardUpstream(inbound(), upstreamCall({ url })))).toBe('psp_destination_forbidden');
    }
    expect(await refusalOf(forwardUpstream(inbound(), upstreamCall({ mode: 'live' })))).toBe('psp_destination_forbidden');
  });

  it('refuses CONNECT and TRACE', async () => {
    for (const method of ['CONNECT', 'TRACE']) {
      expect(await refusalOf(forwardUpstream(inbound(), upstreamCall({ method })))).toBe('parameter_invalid');
    }
  });

  it('ends the wait for a silent upstream, and a body that stalls, with psp_timeout', async () => {
    expect(await refusalOf(forwardUpstream(inbound(), upstreamCall({ url: `${origin}/silent`, timeoutMs: 300 })))).toBe('psp_timeout');
    const answer = await forwardUpstream(inbound(), upstreamCall({ url: `${origin}/stalling`, timeoutMs: 300 }));
    expect(answer.status).toBe(200);
    expect(await refusalOf(bodyOf(answer.body))).toBe('psp_timeout');
  });

  it('closes the upstream request when the caller cancels', async () => {
    hangingClosed = signal();
    const controller = new AbortController();
    const answer = await forwardUpstream(inbound(), upstreamCall({ url: `${origin}/hanging` }), { signal: controller.signal });
    const iterator = answer.body[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.toString()).toBe('first');
    controller.abort();
    // Resolves only once the upstream's side of the exchange has been closed.
    await hangingClosed.promise;
    await expect(iterator.next()).rejects.toBeDefined();
  });

  it('closes the upstream request when the reader stops early', async () => {
    hangingClosed = signal();
    const answer = await forwardUpstream(inbound(), upstreamCall({ url: `${origin}/hanging` }));
    for await (const chunk of answer.body) {
      expect(chunk.toString()).toBe('first');
      break;
    }
    await hangingClosed.promise;
  });

  it('refuses the gateway and fields identities, and calls no upstream', async () => {
    const before = received.length;
    for (const service of ['gateway', 'fields'] as const) {
      const client = proxyAs(service);
      const stream = client.ForwardUpstream(upstreamCallToWire(upstreamCall()), new grpc.Metadata(), { deadline: Date.now() + 5000 });
      const status = await new Promise<grpc.status>((resolve) => {
        stream.on('data', () => undefined);
        stream.on('error', (err: grpc.ServiceError) => resolve(err.code));
        stream.on('end', () => resolve(grpc.status.OK));
      });
      expect({ service, status }).toEqual({ service, status: grpc.status.PERMISSION_DENIED });
    }
    expect(received.length).toBe(before);
  });
});
