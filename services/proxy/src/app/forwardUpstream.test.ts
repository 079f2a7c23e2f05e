import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { UpstreamCall } from '@tessera/protos';
import { createDestinationPolicy, parseCidrList } from '../domain/destinationPolicy';
import { closePspEgress, createPspEgress, type PspEgress } from '../egress/pspEgress';
import type { Resolver } from '../egress/resolver';
import { forwardUpstream, type UpstreamDeps } from './forwardUpstream';

describe('forwardUpstream', () => {
  let server: http.Server;
  let port = 0;
  let egress: PspEgress;
  let deps: UpstreamDeps;
  const lookups: string[] = [];
  const seen: string[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('done');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const policy = createDestinationPolicy({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: 1024, to: 65535 }] });
    // Every name is the loopback upstream; the test sees which names were looked up.
    const resolve: Resolver = (name) => {
      lookups.push(name);
      return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    };
    egress = createPspEgress({ policy, connectTimeoutMs: 2000, timeoutMs: 5000, maxResponseBytes: 1 << 20, resolve });
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          logLines.push(chunk.toString());
          cb();
        },
      }),
    );
    deps = { policy, egress, logger };
  });

  afterAll(async () => {
    await closePspEgress(egress);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const aCall = (over: Partial<UpstreamCall> = {}): UpstreamCall => ({
    merchantId: 'shop',
    routeId: 'rt_1',
    mode: 'test',
    method: 'PUT',
    url: `http://upstream.localtest:${port}/orders/7?session=s3cr3t`,
    headers: [{ name: 'authorization', value: 'Bearer merchant-secret' }],
    body: Buffer.from('{"card":"tok.AAAAAAAAAAAAAAAAAAAAAA"}'),
    timeoutMs: 2000,
    ...over,
  });

  it('sends the request and logs host, method, status and size once the body has ended, never the path, query, headers or body', async () => {
    const res = await forwardUpstream(deps, aCall(), { requestId: 'req_1' });
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe('done');
    expect(seen.at(-1)).toBe('PUT /orders/7?session=s3cr3t {"card":"tok.AAAAAAAAAAAAAAAAAAAAAA"}');
    await new Promise((resolve) => setImmediate(resolve));
    const line = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'upstream exchange');
    expect(line).toMatchObject({ requestId: 'req_1', merchantId: 'shop', routeId: 'rt_1', method: 'PUT', status: 200, bytes: 4 });
    const logs = logLines.join('\n');
    for (const secret of ['/orders/7', 's3cr3t', 'merchant-secret', 'tok.AAAA']) expect(logs).not.toContain(secret);
  });

  it('refuses card data before looking the host up or sending anything, and logs no digit of it', async () => {
    const lookupsBefore = lookups.length;
    const seenBefore = seen.length;
    await expect(
      forwardUpstream(deps, aCall({ url: `http://elsewhere.localtest:${port}/x`, body: Buffer.from('{"n":"4242424242424242"}') })),
    ).rejects.toMatchObject({ code: 'card_data_unmatched' });
    expect(lookups.length).toBe(lookupsBefore);
    expect(seen.length).toBe(seenBefore);
    expect(logLines.join('\n')).not.toContain('4242424242');
  });
});
