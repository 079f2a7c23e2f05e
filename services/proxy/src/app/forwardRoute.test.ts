import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { ForwardRouteCall, RenderRouteCall } from '@tessera/protos';
import { TesseraError } from '@tessera/common';
import { createDestinationPolicy, parseCidrList } from '../domain/destinationPolicy';
import { closePspEgress, createPspEgress, type PspEgress } from '../egress/pspEgress';
import { forwardRoute, type ForwardRouteDeps } from './forwardRoute';

/**
 * ForwardRoute through the real destination policy and egress to a loopback PSP, with a fake vault:
 * the route's hosts are the allowlist, live keys reach https only, a refused destination is never
 * rendered, and what the vault filled in is what the PSP receives.
 */

const logger = pino({ level: 'silent' });
const route = (hosts: string[]) => JSON.stringify({ id: 'stripe', kind: 'outbound', mode: 'test', outbound: { hosts }, filters: [] });

let psp: http.Server;
let port: number;
let received: { url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
let egress: PspEgress;
let renders: RenderRouteCall[] = [];

const vault: ForwardRouteDeps['vault'] = {
  renderRoute: async (input) => {
    renders.push(input);
    return { body: Buffer.from(input.body.toString().replace('4242420000004242', '4242424242424242')), tokens: ['tok.a'] };
  },
};

function deps(): ForwardRouteDeps {
  const policy = createDestinationPolicy({ allowedCidrs: parseCidrList(['127.0.0.1/32']), allowedPorts: [{ from: port, to: port }] });
  egress = createPspEgress({
    policy,
    connectTimeoutMs: 2000,
    timeoutMs: 3000,
    maxResponseBytes: 1 << 20,
    resolve: async (hostname) => (hostname === 'psp.test' ? [{ address: '127.0.0.1', family: 4 }] : []),
  });
  return { policy, egress, vault, logger };
}

const call = (overrides: Partial<ForwardRouteCall> = {}): ForwardRouteCall => ({
  merchantId: 'acme',
  mode: 'test',
  routeJson: route(['psp.test']),
  method: 'POST',
  url: `http://psp.test:${port}/v1/charges?x=1`,
  headers: [
    { name: 'Content-Type', value: 'application/x-www-form-urlencoded' },
    { name: 'Authorization', value: 'Bearer sk_test_1' },
    { name: 'Connection', value: 'x-drop' },
    { name: 'X-Drop', value: '1' },
  ],
  body: Buffer.from('amount=100&card[number]=4242420000004242'),
  ...overrides,
});

beforeAll(async () => {
  psp = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(201, { 'content-type': 'application/json', 'request-id': 'req_1' });
      res.end('{"last4":"4242"}');
    });
  });
  await new Promise<void>((resolve) => psp.listen(0, '127.0.0.1', resolve));
  port = (psp.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => psp.close(() => resolve()));
});

beforeEach(() => {
  received = [];
  renders = [];
});

afterEach(async () => {
  await closePspEgress(egress);
});

it('sends the rendered body to a host on the route, with the filtered headers, and answers the tokens used', async () => {
  const answer = await forwardRoute(deps(), call());
  expect(answer).toMatchObject({ status: 201, tokens: ['tok.a'] });
  expect(answer.body.toString()).toBe('{"last4":"4242"}');
  expect(answer.headers).toEqual(expect.arrayContaining([{ name: 'request-id', value: 'req_1' }]));
  expect(renders).toEqual([
    expect.objectContaining({ merchantId: 'acme', mode: 'test', contentType: 'application/x-www-form-urlencoded' }),
  ]);
  expect(received).toHaveLength(1);
  expect(received[0]).toMatchObject({ url: '/v1/charges?x=1', body: 'amount=100&card[number]=4242424242424242' });
  expect(received[0]!.headers.authorization).toBe('Bearer sk_test_1');
  expect(received[0]!.headers['x-drop']).toBeUndefined();
});

it('refuses a host that is not on the route before any render or connection', async () => {
  await expect(forwardRoute(deps(), call({ routeJson: route(['api.stripe.com']) }))).rejects.toMatchObject({
    code: 'psp_destination_forbidden',
  });
  expect(renders).toEqual([]);
  expect(received).toEqual([]);
});

it('sends a live key to https destinations only', async () => {
  await expect(forwardRoute(deps(), call({ mode: 'live' }))).rejects.toMatchObject({ code: 'psp_destination_forbidden' });
  expect(renders).toEqual([]);
});

it('sends an empty body without asking the vault', async () => {
  const answer = await forwardRoute(deps(), call({ method: 'GET', body: Buffer.alloc(0) }));
  expect(answer).toMatchObject({ status: 201, tokens: [] });
  expect(renders).toEqual([]);
});

it('refuses a route without outbound hosts (an empty allowlist would mean any host)', async () => {
  const refused = forwardRoute(deps(), call({ routeJson: JSON.stringify({ id: 'x', kind: 'outbound' }) }));
  await expect(refused).rejects.toBeInstanceOf(TesseraError);
  await expect(refused).rejects.toMatchObject({ code: 'invalid_request' });
  expect(received).toEqual([]);
});
