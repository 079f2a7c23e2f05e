import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { TesseraError } from '@tessera/common';
import {
  errorFromGrpc,
  toGrpcError,
  callUnary,
  createHealthHandlers,
  healthService,
  VAULT_SERVICE_NAME,
  createProxyClient,
  proxyService,
  requestIdFromMetadata,
  SERVER_OPTIONS,
  vaultService,
  dryRunResponseFromWire,
  forwardRequestToWire,
  forwardUpstream,
  renderRequestFromWire,
  type ForwardCall,
  type ForwardResponse__Output,
  type ForwardBatchResponse__Output,
  type DryRunReport,
  type ProxyClient,
  type RenderRequest,
  type UpstreamCall,
  type VaultHandlers,
  type WireDryRunResponse,
  type WireForwardRequest,
} from '@tessera/protos';
import type { VaultPort } from '../app/vaultPort';
import { createDestinationPolicy, parseCidrList } from '../domain/destinationPolicy';
import { closePspEgress, createPspEgress, type PspEgress } from '../egress/pspEgress';
import { createProxyHandlers } from './proxyHandlers';
import { createVaultPort } from './vaultClient';

/**
 * Forward, DryRun and the vault's readiness end to end over real gRPC and real sockets: a stand-in vault gRPC server
 * (records Render calls, renders by plain substitution), the proxy handlers, and a PSP HTTP
 * server on loopback.
 */

interface RenderCall {
  request: RenderRequest;
  requestId: string | undefined;
}

async function bind(server: grpc.Server): Promise<string> {
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return `127.0.0.1:${port}`;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

let vaultServer: grpc.Server;
let proxyServer: grpc.Server;
let vault: VaultPort;
let egress: PspEgress;
let client: ProxyClient;
let renderCalls: RenderCall[];
/** What the stand-in vault's grpc.health.v1 answers: SERVING or NOT_SERVING. */
let vaultServing = true;
let previewCalls: RenderRequest[];
/** The key modes of the Render calls as they crossed the wire. */
let renderWireModes: string[];
let logLines: string[];
/** What the handlers counted: `<rpc> <outcome>`. */
let observed: string[] = [];
let psp: http.Server;
let pspPort: number;
let pspSeen: Array<{ method: string; url: string; contentType: string | undefined; body: string }>;
let forbiddenPsp: http.Server;
let forbiddenConnections: number;
let forbiddenPort: number;

beforeAll(async () => {
  vaultServer = new grpc.Server(SERVER_OPTIONS);
  const vaultHandlers: Partial<VaultHandlers> = {
    Render(call, callback) {
      renderCalls.push({ request: renderRequestFromWire(call.request), requestId: requestIdFromMetadata(call.metadata) });
      renderWireModes.push(call.request.keyMode);
      if (call.request.token === 'tok.missing') {
        callback(toGrpcError(new TesseraError('token_not_found')));
        return;
      }
      callback(null, { body: Buffer.from(call.request.template.replace('[CARD_NUMBER]', '4242424242424242')) });
    },
    Preview(call, callback) {
      previewCalls.push(renderRequestFromWire(call.request));
      if (call.request.token === 'tok.missing') {
        callback(toGrpcError(new TesseraError('token_not_found')));
        return;
      }
      callback(null, {
        body: call.request.template.replace('[CARD_NUMBER]', '424242******4242'),
        filled: ['[CARD_NUMBER]'],
        unfillable: [{ placeholder: '[CARD_CVV]', code: 'cvv_unavailable' }],
        unknown: [],
      });
    },
  };
  vaultServer.addService(vaultService, vaultHandlers as VaultHandlers);
  vaultServer.addService(
    healthService,
    createHealthHandlers([VAULT_SERVICE_NAME], async () => vaultServing),
  );
  const vaultAddress = await bind(vaultServer);

  psp = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pspSeen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(201, [
        ['Content-Type', 'application/json'],
        ['Set-Cookie', 'a=1'],
        ['Set-Cookie', 'b=2'],
      ]);
      res.end('{"status":"approved"}');
    });
  });
  await new Promise<void>((resolve) => psp.listen(0, '127.0.0.1', resolve));
  pspPort = (psp.address() as AddressInfo).port;

  forbiddenPsp = http.createServer((_req, res) => res.end('internal'));
  forbiddenPsp.on('connection', () => {
    forbiddenConnections += 1;
  });
  await new Promise<void>((resolve) => forbiddenPsp.listen(0, '127.0.0.2', resolve));
  forbiddenPort = (forbiddenPsp.address() as AddressInfo).port;

  const stream = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  vault = createVaultPort(vaultAddress, 2000);
  const policy = createDestinationPolicy({
    allowedCidrs: parseCidrList(['127.0.0.1/32']),
    // The test PSP listens on an ephemeral port.
    allowedPorts: [{ from: 1024, to: 65535 }],
  });
  egress = createPspEgress({ policy, connectTimeoutMs: 2000, timeoutMs: 5000, maxResponseBytes: 1 << 20 });
  proxyServer = new grpc.Server(SERVER_OPTIONS);
  proxyServer.addService(
    proxyService,
    createProxyHandlers({
      policy,
      egress,
      vault,
      logger: pino({ level: 'info' }, stream),
      maxCompletionResponseBytes: 1024,
      observe: (rpc, outcome) => observed.push(`${rpc} ${outcome}`),
    }),
  );
  client = createProxyClient(await bind(proxyServer));
});

beforeEach(() => {
  observed = [];
  renderCalls = [];
  previewCalls = [];
  renderWireModes = [];
  logLines = [];
  pspSeen = [];
  forbiddenConnections = 0;
});

afterAll(async () => {
  client.close();
  vault.close();
  await closePspEgress(egress);
  proxyServer.forceShutdown();
  vaultServer.forceShutdown();
  psp.closeAllConnections();
  forbiddenPsp.closeAllConnections();
  await Promise.all([new Promise((r) => psp.close(r)), new Promise((r) => forbiddenPsp.close(r))]);
});

/** A Forward request as the gateway sends it. */
function forwardRequest(overrides: Partial<ForwardCall> = {}): WireForwardRequest {
  return forwardRequestToWire({
    merchantId: 'mer_1',
    mode: 'test',
    token: 'tok.abc',
    method: 'POST',
    url: `http://127.0.0.1:${pspPort}/charges?api_secret=qs-secret`,
    headers: [
      { name: 'Authorization', value: 'Bearer psp-secret-key' },
      { name: 'Content-Type', value: 'application/json' },
    ],
    bodyTemplate: '{"card":"[CARD_NUMBER]"}',
    hasBody: true,
    allowedHosts: [],
    ...overrides,
  });
}

function forward(req: WireForwardRequest, requestId = 'req_test_1'): Promise<ForwardResponse__Output> {
  return callUnary(client, client.Forward, req, { timeoutMs: 10_000, requestId });
}

async function forwardError(req: WireForwardRequest): Promise<TesseraError> {
  try {
    await forward(req);
  } catch (err) {
    return errorFromGrpc(err);
  }
  throw new Error('expected Forward to fail');
}

describe('Forward', () => {
  it('renders the body in the vault, sends it to the PSP and returns the PSP answer unchanged', async () => {
    const res = await forward(forwardRequest());
    expect(res.status).toBe(201);
    expect(res.body.toString()).toBe('{"status":"approved"}');
    expect(res.headers.filter((h) => h.name !== 'Date' && h.name !== 'Keep-Alive' && h.name !== 'Connection')).toEqual([
      { name: 'Content-Type', value: 'application/json' },
      { name: 'Set-Cookie', value: 'a=1' },
      { name: 'Set-Cookie', value: 'b=2' },
    ]);
    expect(res.pspMs).toBeGreaterThan(0);
    expect(renderCalls).toEqual([
      {
        request: {
          merchantId: 'mer_1',
          mode: 'test',
          token: 'tok.abc',
          template: '{"card":"[CARD_NUMBER]"}',
          contentType: 'application/json',
        },
        requestId: 'req_test_1',
      },
    ]);
    expect(pspSeen).toEqual([
      { method: 'POST', url: '/charges?api_secret=qs-secret', contentType: 'application/json', body: '{"card":"4242424242424242"}' },
    ]);
  });

  it('logs host, method, status and request id but never the query, header values or card data', async () => {
    await forward(forwardRequest());
    const text = logLines.join('');
    const line = JSON.parse(logLines.find((l) => l.includes('psp exchange')) ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({
      requestId: 'req_test_1',
      merchantId: 'mer_1',
      pspHost: `127.0.0.1:${pspPort}`,
      method: 'POST',
      status: 201,
    });
    expect(text).not.toContain('qs-secret');
    expect(text).not.toContain('psp-secret-key');
    expect(text).not.toContain('4242424242424242');
    expect(text).not.toContain('/charges');
  });

  it('refuses a forbidden destination before asking the vault for card data, and never connects', async () => {
    const err = await forwardError(forwardRequest({ url: `http://127.0.0.2:${forbiddenPort}/charges` }));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.param).toBe('pspUrl');
    expect(err.message).toBe('pspUrl points to a loopback address.');
    expect(renderCalls).toHaveLength(0);
    expect(forbiddenConnections).toBe(0);
  });

  it("names the PSP host in the log of a destination refused by the merchant's allowlist or the port rule", async () => {
    await forwardError(forwardRequest({ allowedHosts: ['api.psp.example'] }));
    await forwardError(forwardRequest({ url: 'http://127.0.0.1:22/charges?api_secret=qs-secret' }));
    const refusals = logLines.filter((l) => l.includes('psp exchange failed')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(refusals.map((line) => [line.code, line.pspHost])).toEqual([
      ['psp_destination_forbidden', `127.0.0.1:${pspPort}`],
      ['psp_destination_forbidden', '127.0.0.1:22'],
    ]);
    expect(logLines.join('')).not.toContain('qs-secret');
  });

  it('refuses plain http for live keys before rendering', async () => {
    const err = await forwardError(forwardRequest({ mode: 'live' }));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(renderCalls).toHaveLength(0);
    expect(pspSeen).toHaveLength(0);
  });

  it('passes vault errors such as token_not_found through unchanged, and sends nothing', async () => {
    const err = await forwardError(forwardRequest({ token: 'tok.missing' }));
    expect(err.code).toBe('token_not_found');
    expect(err.status).toBe(404);
    expect(pspSeen).toHaveLength(0);
  });

  it('answers a ForwardBatch item by item, by index, each like its own Forward call, then ends the stream', async () => {
    const results = await new Promise<ForwardBatchResponse__Output[]>((resolve, reject) => {
      const seen: ForwardBatchResponse__Output[] = [];
      const call = client.ForwardBatch(
        {
          items: [
            { requestId: 'req_b1', request: forwardRequest() },
            { requestId: 'req_b2', request: forwardRequest({ url: `http://127.0.0.2:${forbiddenPort}/charges` }) },
            { requestId: 'req_b3', request: forwardRequest({ token: 'tok.missing' }) },
          ],
        },
        { deadline: new Date(Date.now() + 10_000) },
      );
      call.on('data', (result: ForwardBatchResponse__Output) => seen.push(result));
      call.on('error', reject);
      call.on('end', () => resolve(seen));
    });
    const byIndex = new Map(results.map((result) => [result.index, result]));
    expect([...byIndex.keys()].sort()).toEqual([0, 1, 2]);
    expect(byIndex.get(0)?.response).toMatchObject({ status: 201 });
    expect(byIndex.get(0)?.response?.body.toString()).toBe('{"status":"approved"}');
    expect(byIndex.get(1)?.refusal).toMatchObject({ code: 'psp_destination_forbidden', param: 'pspUrl' });
    expect(byIndex.get(2)?.refusal).toMatchObject({ code: 'token_not_found' });
    expect(pspSeen).toHaveLength(1);
    expect(forbiddenConnections).toBe(0);
    const exchanges = logLines.filter((l) => l.includes('psp exchange')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exchanges).toContainEqual(expect.objectContaining({ requestId: 'req_b1', status: 201 }));
  });

  it('sends a request without a body without calling the vault', async () => {
    const res = await forward(forwardRequest({ method: 'GET', hasBody: false, bodyTemplate: '' }));
    expect(res.status).toBe(201);
    expect(renderCalls).toHaveLength(0);
    expect(pspSeen).toEqual([expect.objectContaining({ method: 'GET', body: '' })]);
  });

  it('answers psp_unreachable (502) when the PSP port is closed', async () => {
    const port = await freePort();
    const err = await forwardError(forwardRequest({ url: `http://127.0.0.1:${port}/` }));
    expect(err.code).toBe('psp_unreachable');
    expect(err.status).toBe(502);
  });

  it('stops the PSP exchange when the gateway gives up on the call', async () => {
    let closed: Promise<void> | undefined;
    const hanging = http.createServer((req) => {
      closed = new Promise((resolve) => req.socket.once('close', () => resolve()));
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/charges`;
      const err = await callUnary(client, client.Forward, forwardRequest({ url }), { timeoutMs: 500 }).catch((e: unknown) => e);
      expect((err as grpc.ServiceError).code).toBe(grpc.status.DEADLINE_EXCEEDED);
      const gaveUp = Date.now();
      await closed;
      // Well before the egress's own 5 s deadline.
      expect(Date.now() - gaveUp).toBeLessThan(2000);
    } finally {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });

  it('stops every PSP exchange of a ForwardBatch when the gateway gives up on the call', async () => {
    const closed: Array<Promise<void>> = [];
    const hanging = http.createServer((req) => {
      closed.push(new Promise((resolve) => req.socket.once('close', () => resolve())));
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/charges`;
      const status = await new Promise<number>((resolve) => {
        const call = client.ForwardBatch(
          { items: [{ request: forwardRequest({ url }) }, { request: forwardRequest({ url: `${url}?b` }) }] },
          { deadline: new Date(Date.now() + 500) },
        );
        call.on('data', () => undefined);
        call.on('error', (err: grpc.ServiceError) => resolve(err.code));
        call.on('end', () => resolve(grpc.status.OK));
      });
      expect(status).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(closed).toHaveLength(2);
      const gaveUp = Date.now();
      await Promise.all(closed);
      // Well before the egress's own 5 s deadline.
      expect(Date.now() - gaveUp).toBeLessThan(2000);
    } finally {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });

  it('refuses an unsupported method as a bad parameter', async () => {
    const err = await forwardError(forwardRequest({ method: 'TRACE' }));
    expect(err.code).toBe('parameter_invalid');
    expect(err.param).toBe('method');
  });
});

describe('ForwardUpstream', () => {
  const upstreamCall = (over: Partial<UpstreamCall> = {}): UpstreamCall => ({
    merchantId: 'shop',
    routeId: 'rt_1',
    mode: 'test',
    method: 'POST',
    url: `http://127.0.0.1:${pspPort}/orders`,
    headers: [{ name: 'content-type', value: 'application/json' }],
    body: Buffer.from('{"card":"tok.AAAAAAAAAAAAAAAAAAAAAA"}'),
    timeoutMs: 2000,
    ...over,
  });

  it('streams the upstream’s answer back, never asks the vault, and counts the call by status class once the body has ended', async () => {
    const answer = await forwardUpstream(client, upstreamCall(), { requestId: 'req_up' });
    expect(answer.status).toBe(201);
    expect(answer.headers.filter((h) => h.name.toLowerCase() === 'set-cookie').map((h) => h.value)).toEqual(['a=1', 'b=2']);
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe('{"status":"approved"}');
    expect(pspSeen).toEqual([
      { method: 'POST', url: '/orders', contentType: 'application/json', body: '{"card":"tok.AAAAAAAAAAAAAAAAAAAAAA"}' },
    ]);
    expect(renderCalls).toEqual([]);
    expect(observed).toEqual(['ForwardUpstream upstream_2xx']);
  });

  it('refuses card data as a typed error, counted by its code, and sends nothing', async () => {
    const err = await forwardUpstream(client, upstreamCall({ body: Buffer.from('{"card":"4242424242424242"}') })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'card_data_unmatched', status: 400 });
    expect(pspSeen).toEqual([]);
    expect(observed).toEqual(['ForwardUpstream card_data_unmatched']);
  });
});

describe('the wire during a rolling upgrade', () => {
  it('sends the key mode to the vault as the enum, and serves a gateway of the previous release (strings and has_body)', async () => {
    const previousRelease: WireForwardRequest = {
      merchantId: 'mer_1',
      mode: 'test',
      token: 'tok.abc',
      method: 'POST',
      url: `http://127.0.0.1:${pspPort}/charges`,
      headers: [{ name: 'Content-Type', value: 'application/json' }],
      bodyTemplate: '{"card":"[CARD_NUMBER]"}',
      hasBody: true,
    };
    expect((await forward(previousRelease)).status).toBe(201);
    expect(renderWireModes).toEqual(['MODE_TEST']);
    expect(renderCalls[0]?.request).toMatchObject({ mode: 'test', template: '{"card":"[CARD_NUMBER]"}' });
    // The previous release leaves an empty body_template out; has_body still says there is a body.
    expect((await forward({ ...previousRelease, bodyTemplate: '' })).status).toBe(201);
    expect(renderCalls[1]?.request).toMatchObject({ template: '' });
    expect(await forwardError({ ...previousRelease, method: 'TRACE' })).toMatchObject({ code: 'parameter_invalid', param: 'method' });
    expect(pspSeen.map((seen) => seen.method)).toEqual(['POST', 'POST']);
  });
});

describe('DryRun', () => {
  function dryRun(req: WireForwardRequest): Promise<DryRunReport> {
    return callUnary<WireForwardRequest, WireDryRunResponse>(client, client.DryRun, req, {
      timeoutMs: 10_000,
      requestId: 'req_dry_1',
    }).then(dryRunResponseFromWire);
  }

  it('returns the masked request and an allowed verdict without rendering or contacting the PSP', async () => {
    const res = await dryRun(forwardRequest());
    expect(res).toMatchObject({
      method: 'POST',
      url: `http://127.0.0.1:${pspPort}/charges?api_secret=qs-secret`,
      hasBody: true,
      destinationAllowed: true,
      destinationErrorCode: '',
    });
    expect(res.headers).toEqual([
      { name: 'Authorization', value: 'Bearer ***' },
      { name: 'Content-Type', value: 'application/json' },
    ]);
    expect(res.preview).toEqual({
      body: '{"card":"424242******4242"}',
      filled: ['[CARD_NUMBER]'],
      unfillable: [{ placeholder: '[CARD_CVV]', code: 'cvv_unavailable' }],
      unknown: [],
    });
    expect(previewCalls).toEqual([
      { merchantId: 'mer_1', mode: 'test', token: 'tok.abc', template: '{"card":"[CARD_NUMBER]"}', contentType: 'application/json' },
    ]);
    expect(renderCalls).toHaveLength(0);
    expect(pspSeen).toHaveLength(0);
  });

  it('reports a forbidden destination as a verdict, still previews the body, and never connects', async () => {
    const res = await dryRun(forwardRequest({ url: `http://127.0.0.2:${forbiddenPort}/charges` }));
    expect(res.destinationAllowed).toBe(false);
    expect(res.destinationErrorCode).toBe('psp_destination_forbidden');
    expect(res.destinationErrorMessage).toBe('pspUrl points to a loopback address.');
    expect(res.preview?.body).toBe('{"card":"424242******4242"}');
    expect(forbiddenConnections).toBe(0);
  });

  it('fails like Forward on a bad method or an unknown token', async () => {
    const bad = await callUnary(client, client.DryRun, forwardRequest({ method: 'TRACE' }), { timeoutMs: 10_000 }).catch(errorFromGrpc);
    expect((bad as TesseraError).code).toBe('parameter_invalid');
    const missing = await dryRun(forwardRequest({ token: 'tok.missing' })).catch(errorFromGrpc);
    expect((missing as TesseraError).code).toBe('token_not_found');
  });

  it('skips the vault when there is no body', async () => {
    const res = await dryRun(forwardRequest({ method: 'GET', hasBody: false, bodyTemplate: '' }));
    expect(res.hasBody).toBe(false);
    expect(res.preview).toBeNull();
    expect(previewCalls).toHaveLength(0);
  });
});

describe('vault readiness (what the proxy’s own grpc.health.v1 answers)', () => {
  it('is ready while the vault’s grpc.health.v1 says SERVING, and not ready while it says NOT_SERVING', async () => {
    await expect(vault.ready()).resolves.toEqual({ ready: true, detail: '' });
    vaultServing = false;
    try {
      await expect(vault.ready()).resolves.toEqual({ ready: false, detail: 'vault not ready' });
    } finally {
      vaultServing = true;
    }
  });

  it('is not ready when the vault cannot be reached within its deadline', async () => {
    const downVault = createVaultPort(`127.0.0.1:${await freePort()}`, 300);
    try {
      await expect(downVault.ready()).resolves.toEqual({ ready: false, detail: 'vault unreachable' });
    } finally {
      downVault.close();
    }
  });
});
