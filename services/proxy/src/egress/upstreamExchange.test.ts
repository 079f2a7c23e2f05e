import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TesseraError } from '@tessera/common';
import { createDestinationPolicy, parseCidrList } from '../domain/destinationPolicy';
import {
  cancelPspExchange,
  closePspEgress,
  createPspEgress,
  preflightDestination,
  type PspCancellation,
  type PspEgress,
} from './pspEgress';
import { streamFromUpstream, type StreamedResponse, type UpstreamRequest } from './upstreamExchange';

/** 127.0.0.1 on any port: the policy has its own tests (egressPolicy.test.ts). */
const policy = createDestinationPolicy({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: 1, to: 65535 }] });
// A size limit far below the answers below: it is the whole-answer exchanges', not a streamed one's.
const egress: PspEgress = createPspEgress({ connectTimeoutMs: 2000, timeoutMs: 3000, maxResponseBytes: 1024, policy });

let server: http.Server;
let origin = '';
let handle: http.RequestListener = (_req, res) => res.end('ok');
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await closePspEgress(egress);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function request(path: string, over: Partial<UpstreamRequest> = {}): Promise<StreamedResponse> {
  const destination = await preflightDestination(egress, policy.checkUrl(`${origin}${path}`, 'test', []));
  return streamFromUpstream(egress, { destination, method: 'GET', headers: [], body: Buffer.alloc(0), timeoutMs: 3000, ...over });
}

async function collect(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function later(): { promise: Promise<void>; fire: () => void } {
  let fire = (): void => undefined;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

describe('streamFromUpstream', () => {
  it('resolves with the head while the upstream is still writing, and the body follows whole, beyond the whole-answer size limit', async () => {
    const headSeen = later();
    const payload = Buffer.alloc(200_000, 'a');
    handle = (_req, res) => {
      res.writeHead(200, { 'x-up': '1', connection: 'keep-alive' });
      res.write('first|');
      void headSeen.promise.then(() => res.end(payload));
    };
    const res = await request('/stream');
    expect(res.status).toBe(200);
    expect(res.headers).toContainEqual({ name: 'x-up', value: '1' });
    expect(res.headers.map((h) => h.name.toLowerCase())).not.toContain('connection');
    headSeen.fire();
    const body = await collect(res.body);
    expect(body.equals(Buffer.concat([Buffer.from('first|'), payload]))).toBe(true);
    expect(res.body.bytes).toBe(body.length);
  });

  it('aborts the upstream request when the reader lets go of the body before its end', async () => {
    const closed = later();
    handle = (_req, res) => {
      res.on('close', () => closed.fire());
      res.writeHead(200);
      res.write('first');
    };
    const res = await request('/hanging');
    res.body.destroy();
    await closed.promise;
  });

  it('aborts the upstream request when the caller cancels after the head, failing the body as unreachable', async () => {
    const closed = later();
    handle = (_req, res) => {
      res.on('close', () => closed.fire());
      res.writeHead(200);
      res.write('first');
    };
    const cancellation: PspCancellation = { cancelled: false };
    const res = await request('/hanging', { cancellation });
    cancelPspExchange(cancellation);
    await expect(collect(res.body)).rejects.toMatchObject({ code: 'psp_unreachable' });
    await closed.promise;
  });

  it('refuses to start an exchange the caller has already given up', async () => {
    await expect(request('/stream', { cancellation: { cancelled: true } })).rejects.toBeInstanceOf(TesseraError);
  });

  it('answers psp_timeout when no head comes within timeoutMs', async () => {
    handle = () => undefined;
    await expect(request('/silent', { timeoutMs: 100 })).rejects.toMatchObject({ code: 'psp_timeout' });
  });

  it('passes a redirect back as it is', async () => {
    handle = (_req, res) => res.writeHead(307, { location: '/elsewhere' }).end();
    const res = await request('/redirect');
    expect(res.status).toBe(307);
    expect(res.headers).toContainEqual({ name: 'location', value: '/elsewhere' });
    expect((await collect(res.body)).length).toBe(0);
  });
});
