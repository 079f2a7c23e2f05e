/**
 * Issue 11, finding 1: test and live data never meet. A token belongs to the mode of the key that
 * created it; a key of the same merchant in the other mode gets 404 token_not_found, exactly as
 * for an unknown token, on every route, and no card data reaches a PSP.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { aCard, apiClient, type ApiKey, findCardDataInLogs, type RecordedRequest, TEST_CARDS, TEST_CVV, useStack } from './harness';

jest.setTimeout(60_000);

/** Not a published test card: only a live key may tokenize it. */
const LIVE_PAN = '4111111111111111';

/**
 * Live keys reach https PSPs only. A self-signed certificate for 127.0.0.1, trusted by the
 * services through NODE_EXTRA_CA_CERTS, lets the live key's own proxy calls succeed for real.
 */
const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-psp-tls-'));
const made = spawnSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'psp.key',
    '-out',
    'psp.crt',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ],
  { cwd: certDir, encoding: 'utf8' },
);
if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);

const env = useStack({ psp: true, env: { NODE_EXTRA_CA_CERTS: path.join(certDir, 'psp.crt') } });

/** The https stand-in PSP for the live key: records what it receives. */
const httpsPsp = {
  requests: [] as RecordedRequest[],
  connections: 0,
  server: https.createServer(
    { key: fs.readFileSync(path.join(certDir, 'psp.key')), cert: fs.readFileSync(path.join(certDir, 'psp.crt')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        httpsPsp.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    },
  ),
  url: '',
};
httpsPsp.server.on('secureConnection', () => httpsPsp.connections++);

let live: ApiKey;
let test: ApiKey;
let asLive: ReturnType<typeof apiClient>;
let asTest: ReturnType<typeof apiClient>;

beforeAll(async () => {
  live = env.stack.createKey('acme', 'live');
  test = env.stack.createKey('acme', 'test');
  asLive = apiClient(env.stack, live.apiKey);
  asTest = apiClient(env.stack, test.apiKey);
  await new Promise<void>((resolve) => httpsPsp.server.listen(0, '127.0.0.1', resolve));
  httpsPsp.url = `https://127.0.0.1:${(httpsPsp.server.address() as net.AddressInfo).port}`;
});

afterAll(async () => {
  httpsPsp.server.closeAllConnections();
  await new Promise<void>((resolve) => httpsPsp.server.close(() => resolve()));
  fs.rmSync(certDir, { recursive: true, force: true });
});

beforeEach(() => {
  env.psp.reset();
  httpsPsp.requests = [];
  httpsPsp.connections = 0;
});

const PSP_BODY = JSON.stringify({ number: '[CARD_NUMBER]', cvc: '[CARD_CVV]', name: '[CARD_HOLDER]' });

function proxyBody(token: string, pspUrl: string): Record<string, unknown> {
  return { method: 'post', token, pspUrl: `${pspUrl}/v1/charges`, pspHeaders: { 'content-type': 'application/json' }, pspBody: PSP_BODY };
}

async function tokenize(call: ReturnType<typeof apiClient>, number: string): Promise<string> {
  const res = await call('POST', '/v1/token', aCard({ number }));
  expect(res.status).toBe(201);
  return res.body.token as string;
}

/** A 404 token_not_found in the envelope, minus the request id, to compare with an unknown token's. */
function notFound(res: { status: number; headers: Headers; body: any }): unknown {
  expect(res.status).toBe(404);
  expect(res.headers.get('x-tessera-error')).toBe('token_not_found');
  const { requestId, ...error } = res.body.error as Record<string, unknown>;
  expect(requestId).toEqual(expect.any(String));
  return error;
}

/** Every route a key can name a token on, each answered as for a token that does not exist. */
async function expectEveryRouteNotFound(call: ReturnType<typeof apiClient>, token: string, pspUrl: string): Promise<void> {
  const unknown = notFound(await call('GET', '/v1/token/tok.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'));
  expect(notFound(await call('GET', `/v1/token/${token}`))).toEqual(unknown);
  expect(notFound(await call('POST', '/v1/proxy', proxyBody(token, pspUrl)))).toEqual(unknown);
  expect(notFound(await call('POST', '/v1/proxy/dry-run', proxyBody(token, pspUrl)))).toEqual(unknown);
  expect(notFound(await call('DELETE', `/v1/token/${token}`))).toEqual(unknown);
}

describe('test and live tokens never meet (same merchant)', () => {
  it('a test key gets token_not_found for a live card on every route, the PSP receives nothing, and the live key still works', async () => {
    const token = await tokenize(asLive, LIVE_PAN);

    await expectEveryRouteNotFound(asTest, token, env.psp.url);
    expect(env.psp.requests).toHaveLength(0);
    expect(env.psp.connections).toBe(0);

    // Nothing was deleted or consumed: the live key still reads, previews and uses the card and its CVV.
    expect((await asLive('GET', `/v1/token/${token}`)).body).toMatchObject({ token, last4: '1111', cvvAvailable: true });
    const preview = await asLive('POST', '/v1/proxy/dry-run', proxyBody(token, httpsPsp.url));
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ wouldSend: true, placeholders: { filled: ['[CARD_NUMBER]', '[CARD_CVV]', '[CARD_HOLDER]'] } });
    const sent = await asLive('POST', '/v1/proxy', proxyBody(token, httpsPsp.url));
    expect(sent.status).toBe(200);
    expect(httpsPsp.requests).toHaveLength(1);
    expect(JSON.parse(httpsPsp.requests[0]!.body.toString('utf8'))).toEqual({ number: LIVE_PAN, cvc: TEST_CVV, name: 'Ada Lovelace' });
  });

  it('a live key gets token_not_found for a test card on every route, and the test key still works', async () => {
    const token = await tokenize(asTest, TEST_CARDS.visa);

    await expectEveryRouteNotFound(asLive, token, httpsPsp.url);
    expect(httpsPsp.connections).toBe(0);

    expect((await asTest('GET', `/v1/token/${token}`)).body).toMatchObject({ token, last4: '4242', cvvAvailable: true });
    const sent = await asTest('POST', '/v1/proxy', proxyBody(token, env.psp.url));
    expect(sent.status).toBe(200);
    expect(JSON.parse(env.psp.requests[0]!.body.toString('utf8'))).toEqual({
      number: TEST_CARDS.visa,
      cvc: TEST_CVV,
      name: 'Ada Lovelace',
    });
  });

  it('keeps the modes apart when calls of both modes arrive together and are batched', async () => {
    const liveToken = await tokenize(asLive, LIVE_PAN);
    const testToken = await tokenize(asTest, TEST_CARDS.visa);
    // Interleaved and concurrent: the gateway and the proxy group calls that arrive together into
    // ForwardBatch and RenderBatch calls, here mixing both modes (TokenizeBatch likewise below).
    const attempts = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? asTest('POST', '/v1/proxy', proxyBody(liveToken, env.psp.url))
          : asLive('POST', '/v1/proxy', proxyBody(testToken, httpsPsp.url)),
      ),
    );
    for (const res of attempts) notFound(res);
    expect(env.psp.connections).toBe(0);
    expect(httpsPsp.connections).toBe(0);
    const tokenized = await Promise.all([
      asLive('POST', '/v1/token', aCard({ number: LIVE_PAN })),
      asTest('POST', '/v1/token', aCard()),
      asLive('POST', '/v1/token', aCard({ number: LIVE_PAN })),
    ]);
    for (const res of tokenized) expect(res.status).toBe(201);
    notFound(await asTest('GET', `/v1/token/${tokenized[0]!.body.token as string}`));
    notFound(await asLive('GET', `/v1/token/${tokenized[1]!.body.token as string}`));
  });

  it('writes no card number or CVV to any service log', () => {
    expect(findCardDataInLogs(env.stack.logs(), [LIVE_PAN, TEST_CARDS.visa], [TEST_CVV])).toEqual([]);
  });
});
