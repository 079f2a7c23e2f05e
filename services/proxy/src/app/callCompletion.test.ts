import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { TesseraError } from '@tessera/common';
import { createDestinationPolicy, parseCidrList } from '../domain/destinationPolicy';
import { closePspEgress, createPspEgress, type PspEgress } from '../egress/pspEgress';
import { callCompletion, type CompletionDeps } from './callCompletion';

/** A merchant's completion endpoint on loopback: records each call, answers as `reply` says. */
interface Seen {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('callCompletion', () => {
  let server: http.Server;
  let origin = '';
  let egress: PspEgress;
  let deps: CompletionDeps;
  const seen: Seen[] = [];
  let reply: (res: http.ServerResponse) => void = (res) => res.end('{"outcome":"succeeded"}');

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        reply(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const policy = createDestinationPolicy({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: 1024, to: 65535 }] });
    egress = createPspEgress({ policy, connectTimeoutMs: 2000, timeoutMs: 5000, maxResponseBytes: 1 << 20 });
    deps = { policy, egress, logger: pino({ level: 'silent' }), maxResponseBytes: 64 };
  });

  afterAll(async () => {
    await closePspEgress(egress);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    seen.length = 0;
    reply = (res) => res.end('{"outcome":"succeeded"}');
  });

  const aCall = (overrides: Partial<Parameters<typeof callCompletion>[1]> = {}) => ({
    merchantId: 'shop',
    mode: 'test',
    url: `${origin}/complete`,
    headers: [{ name: 'tessera-signature', value: 't=1,v1=ab' }],
    body: Buffer.from('{"formSession":"fs_x"}'),
    timeoutMs: 2000,
    ...overrides,
  });

  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'answered',
      (err: TesseraError) => err.code,
    );

  it('POSTs the body byte for byte as JSON with the caller’s headers and returns the status and body', async () => {
    const answer = await callCompletion(deps, aCall());
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('{"outcome":"succeeded"}');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', body: '{"formSession":"fs_x"}' });
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(seen[0]?.headers['tessera-signature']).toBe('t=1,v1=ab');
  });

  it('refuses a destination the policy refuses, and live http, without sending anything', async () => {
    expect(await codeOf(callCompletion(deps, aCall({ url: 'http://169.254.169.254/latest' })))).toBe('psp_destination_forbidden');
    expect(await codeOf(callCompletion(deps, aCall({ mode: 'live' })))).toBe('psp_destination_forbidden');
    expect(seen).toHaveLength(0);
  });

  it('stops at the caller’s deadline and at MERCHANT_CALL_MAX_RESPONSE_BYTES', async () => {
    reply = (res) => setTimeout(() => res.end('{"outcome":"succeeded"}'), 1500);
    expect(await codeOf(callCompletion(deps, aCall({ timeoutMs: 300 })))).toBe('psp_timeout');
    reply = (res) => res.end(JSON.stringify({ outcome: 'declined', message: 'x'.repeat(200) }));
    expect(await codeOf(callCompletion(deps, aCall()))).toBe('psp_response_too_large');
  });
});
