/**
 * Issue 26, item 3: the fields service dials the proxy with its own certificate (SAN DNS:fields)
 * for one thing only, a hosted page's completion call to a merchant's endpoint. The proxy lets that
 * identity make CallCompletion (and ask readiness) and nothing else; the gateway's identity cannot
 * make CallCompletion. Issue 27: webhook deliveries (DeliverWebhook) are the gateway's alone. A real
 * proxy over mTLS, a merchant endpoint on loopback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import {
  callUnary,
  clientCredentials,
  completionCallToWire,
  createProxyClient,
  devTlsFiles,
  errorRaisedByPeer,
  forwardRequestToWire,
  webhookDeliveryToWire,
  readTlsMaterial,
  tlsChannelOptions,
  type CallCompletionRequest,
  type CallCompletionResponse__Output,
  type DeliverWebhookRequest,
  type DeliverWebhookResponse__Output,
  type ProxyClient,
  type WireForwardRequest,
} from '@tessera/protos';
import { useStack } from './harness';

jest.setTimeout(90_000);

const env = useStack({ tls: true });
const CALL = { timeoutMs: 5000 };

let merchant: http.Server;
let merchantOrigin = '';
const received: string[] = [];
beforeAll(async () => {
  merchant = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(`${req.method} ${req.url} ${req.headers['content-type']} ${body}`);
      // A receiver that answers far more than anyone reads.
      if (req.url === '/events-chatty') res.writeHead(202, { 'content-type': 'text/plain' }).end('x'.repeat(1 << 20));
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"outcome":"succeeded"}');
    });
  });
  await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
  merchantOrigin = `http://127.0.0.1:${(merchant.address() as AddressInfo).port}`;
});

const clients: ProxyClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  merchant.closeAllConnections();
  await new Promise<void>((resolve) => merchant.close(() => resolve()));
});

/** A proxy client as the named service builds it: its own certificate, the proxy's name expected. */
function proxyAs(service: 'fields' | 'gateway'): ProxyClient {
  const tls = readTlsMaterial(devTlsFiles(env.stack.certDir as string, service));
  const client = createProxyClient(env.stack.env.PROXY_ADDR as string, clientCredentials(tls), tlsChannelOptions(tls, 'proxy'));
  clients.push(client);
  return client;
}

async function outcomeOf(promise: Promise<unknown>): Promise<{ status: grpc.status | 'ok'; code?: string }> {
  try {
    await promise;
    return { status: 'ok' };
  } catch (err) {
    const code = errorRaisedByPeer(err)?.code;
    return { status: (err as grpc.ServiceError).code, ...(code === undefined ? {} : { code }) };
  }
}

const completion = () =>
  completionCallToWire({
    merchantId: 'shop',
    mode: 'test',
    url: `${merchantOrigin}/complete`,
    headers: [{ name: 'tessera-signature', value: 't=1,v1=00' }],
    body: Buffer.from('{"formSession":"fs_x"}'),
    timeoutMs: 3000,
  });

const forward = (): WireForwardRequest =>
  forwardRequestToWire({
    merchantId: 'shop',
    mode: 'test',
    token: 'tok.AAAAAAAAAAAAAAAAAAAAAA',
    method: 'POST',
    url: `${merchantOrigin}/charge`,
    headers: [],
    bodyTemplate: '{"number":"[CARD_NUMBER]"}',
    hasBody: true,
    allowedHosts: [],
  });

const delivery = (path = '/events') =>
  webhookDeliveryToWire({
    merchantId: 'shop',
    mode: 'test',
    url: `${merchantOrigin}${path}`,
    headers: [{ name: 'tessera-signature', value: 't=1,v1=00' }],
    body: Buffer.from('{"id":"evt_x"}'),
    timeoutMs: 3000,
  });

describe('the proxy’s callers', () => {
  it('lets the fields identity call a merchant’s completion endpoint, sending the body as JSON', async () => {
    const client = proxyAs('fields');
    const answer = await callUnary<CallCompletionRequest, CallCompletionResponse__Output>(
      client,
      client.CallCompletion,
      completion(),
      CALL,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('{"outcome":"succeeded"}');
    expect(received).toEqual(['POST /complete application/json {"formSession":"fs_x"}']);
  });

  it('refuses the fields identity Forward, ForwardBatch and DryRun: it can never have card data rendered', async () => {
    const client = proxyAs('fields');
    const before = received.length;
    expect(await outcomeOf(callUnary(client, client.Forward, forward(), CALL))).toEqual({ status: grpc.status.PERMISSION_DENIED });
    expect(await outcomeOf(callUnary(client, client.DryRun, forward(), CALL))).toEqual({ status: grpc.status.PERMISSION_DENIED });
    const batch = client.ForwardBatch({ items: [{ requestId: 'r', request: forward() }] }, new grpc.Metadata(), {
      deadline: Date.now() + CALL.timeoutMs,
    });
    const status = await new Promise<grpc.status>((resolve) => {
      batch.on('data', () => undefined);
      batch.on('error', (err: grpc.ServiceError) => resolve(err.code));
      batch.on('end', () => resolve(grpc.status.OK));
    });
    expect(status).toBe(grpc.status.PERMISSION_DENIED);
    expect(received.length).toBe(before);
  });

  it('refuses the gateway identity CallCompletion', async () => {
    const client = proxyAs('gateway');
    expect(await outcomeOf(callUnary(client, client.CallCompletion, completion(), CALL))).toEqual({
      status: grpc.status.PERMISSION_DENIED,
    });
  });

  it('lets the gateway identity deliver a webhook, answering the receiver’s status and never more than a few KiB of its body', async () => {
    const client = proxyAs('gateway');
    const before = received.length;
    const answer = await callUnary<DeliverWebhookRequest, DeliverWebhookResponse__Output>(
      client,
      client.DeliverWebhook,
      delivery('/events-chatty'),
      CALL,
    );
    expect(answer.status).toBe(202);
    expect(answer.latencyMs).toBeGreaterThan(0);
    expect(Object.keys(answer).sort()).toEqual(['latencyMs', 'status']);
    expect(received.slice(before)).toEqual(['POST /events-chatty application/json {"id":"evt_x"}']);
  });

  it('refuses the fields identity DeliverWebhook', async () => {
    const client = proxyAs('fields');
    const before = received.length;
    expect(await outcomeOf(callUnary(client, client.DeliverWebhook, delivery(), CALL))).toEqual({ status: grpc.status.PERMISSION_DENIED });
    expect(received.length).toBe(before);
  });
});
