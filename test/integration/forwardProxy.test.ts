/**
 * Issue 28, item 3: the forward proxy end to end through real processes. The merchant's PSP client
 * (the unmodified stripe SDK, and curl) sets Tessera as its HTTPS proxy; the gateway terminates
 * TLS for the PSP host of an outbound route with a leaf signed by the merchant's CA (the vault),
 * the proxy sends the request with the route's aliases replaced by card data, to the sandbox PSP
 * over HTTPS. PSP host names are answered by a fake DNS server (PSP_DNS_SERVERS): no public name is
 * ever resolved, and the clients never resolve the PSP host at all (a CONNECT carries the name).
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { loggedIn, type AdminClient } from './adminClient';
import { chargeWithStripeSdk, downloadForwardProxyCa, forwardProxyUrl, useSandboxPspOverTls } from './forwardProxyClient';
import { aCard, apiClient, findCardDataInLogs, ROOT, TEST_CARDS, TEST_CVV, useStack } from './harness';
import { sample, scrape } from './metricsScrape';

jest.setTimeout(120_000);

const MERCHANT = 'fwd-shop';
const PSP_HOST = 'psp.test';
/** On the route, but every address it has is private: the proxy's address rules refuse it. */
const PRIVATE_HOST = 'internal.psp.test';
/** Resolvable, but on no route. */
const OTHER_HOST = 'other.test';

const psp = useSandboxPspOverTls({
  hosts: [PSP_HOST],
  resolve: (name) => {
    if (name === PSP_HOST || name === OTHER_HOST) return '127.0.0.1';
    if (name === PRIVATE_HOST) return '10.0.0.1';
    return undefined;
  },
});
let sandboxTlsPort: number;
let forwardProxyPort: number;
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-forward-proxy-'));

const env = useStack(() => ({
  // Each service as its own Redis user: the gateway reads the routes with its read-only grant.
  redis: { acl: true },
  serviceEnv: psp.serviceEnv(),
  // Port 0: the gateway picks a free one for its metrics and logs it.
  env: { METRICS_PORT: '0' },
}));

afterAll(() => {
  fs.rmSync(workDir, { recursive: true, force: true });
});

const ROUTE = {
  id: 'sandbox',
  kind: 'outbound',
  mode: 'test',
  outbound: { hosts: [PSP_HOST, PRIVATE_HOST] },
  filters: [
    { location: 'form', field: 'card[number]', store: 'number' },
    { location: 'json', pointer: '/card/number', store: 'number' },
  ],
};

let secretKey: { apiKey: string; id: string };
let asMerchant: ReturnType<typeof apiClient>;
let caPem: string;
let alias: string;
let token: string;
let platform: AdminClient;

function routesCli(args: string[]): string {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'services/admin/dist/cli/routes.js'), ...args], {
    cwd: ROOT,
    env: env.stack.env,
    encoding: 'utf8',
    timeout: 15_000,
  });
  if (result.status !== 0) throw new Error(`routes CLI failed (${result.status}): ${result.stderr}${result.stdout}`);
  return result.stdout;
}

beforeAll(async () => {
  sandboxTlsPort = psp.port;
  forwardProxyPort = psp.forwardProxyPort;
  const routeFile = path.join(workDir, 'routes.json');
  fs.writeFileSync(routeFile, JSON.stringify(ROUTE));
  routesCli(['apply', '--merchant', MERCHANT, '--file', routeFile]);
  secretKey = env.stack.createKey(MERCHANT, 'test');
  asMerchant = apiClient(env.stack, secretKey.apiKey);
  const created = await asMerchant('POST', '/v1/token', aCard({ number: TEST_CARDS.visa, aliasFormats: ['card_bin_last4'] }));
  expect(created.status).toBe(201);
  token = created.body.token;
  alias = created.body.aliases.card_bin_last4;
  expect(alias).toMatch(/^424242\d{6}4242$/);
  expect(alias).not.toBe(TEST_CARDS.visa);

  const ca = await asMerchant('GET', '/v1/forward-proxy/ca.pem');
  expect(ca.status).toBe(200);
  expect(ca.headers.get('content-type')).toBe('application/x-pem-file');
  caPem = await downloadForwardProxyCa(env.stack, secretKey.apiKey, path.join(workDir, 'ca.pem'));
  expect(caPem).toBe(ca.text);
  expect(caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);

  env.stack.createOperator('ops@fwd.test', 'correct horse battery staple', null);
  platform = await loggedIn(env.stack.adminUrl, 'ops@fwd.test', 'correct horse battery staple');
});

const proxyUrl = (key: string) => forwardProxyUrl(forwardProxyPort, key);

/** A raw CONNECT: the proxy's answer head and body, as a client sees it before any TLS. */
async function connect(target: string, headers: Record<string, string> = {}): Promise<{ head: string; body: string; socket: net.Socket }> {
  const socket = net.connect(forwardProxyPort, '127.0.0.1');
  const lines = [`CONNECT ${target} HTTP/1.1`, `Host: ${target}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  let received = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ head, body: received.subarray(end + 4, end + 4 + length).toString(), socket });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

const basic = (key: string) => `Basic ${Buffer.from(`x:${key}`).toString('base64')}`;

/** A TLS session through a tunnel to `target`, trusting the merchant's CA only. */
async function tunnel(target: string, servername = target.split(':')[0]!): Promise<tls.TLSSocket> {
  const { head, socket } = await connect(target, { 'Proxy-Authorization': basic(secretKey.apiKey) });
  expect(head).toMatch(/^HTTP\/1\.1 200/);
  return new Promise((resolve, reject) => {
    const secure = tls.connect({ socket, servername, ca: caPem }, () => resolve(secure));
    secure.once('error', reject);
  });
}

/** Writes `request` as it is into a fresh tunnel and reads the whole answer (the server closes it). */
async function rawThroughTunnel(target: string, request: string): Promise<string> {
  const secure = await tunnel(target);
  secure.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of secure) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function parseAnswer(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
  return { status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(end + 4) };
}

/** A request in the tunnel as a PSP client writes it, the body form-encoded. */
const chargeRequest = (host: string, body: string, extra = '') =>
  `POST /v1/charges HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: Bearer sk_test_sandbox\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;

const chargeForm = (number: string) =>
  `amount=1000&currency=eur&card[number]=${number}&card[exp_month]=12&card[exp_year]=2031&card[cvc]=123`;

describe('the forward proxy', () => {
  it('lets the unmodified stripe SDK charge a stored card by its Luhn-valid alias: the sandbox gets the card, the client never sees it', async () => {
    const stdout = await chargeWithStripeSdk({
      proxyUrl: proxyUrl(secretKey.apiKey),
      caFile: path.join(workDir, 'ca.pem'),
      host: PSP_HOST,
      port: sandboxTlsPort,
      cardNumber: alias,
    });
    const charge = JSON.parse(stdout) as Record<string, unknown>;
    // The sandbox approves published test cards only, and an alias is never one: it got the card.
    expect(charge).toMatchObject({ object: 'charge', status: 'succeeded', amount: 1000, currency: 'eur', card: { last4: '4242' } });
    expect(stdout).not.toContain(TEST_CARDS.visa);
  });

  it('does the same for curl --proxy with the CA from GET /v1/forward-proxy/ca.pem', async () => {
    // Not spawnSync: the fake DNS server answers the proxy from this process's event loop.
    const result = await promisify(execFile)(
      'curl',
      [
        '-sS',
        '--noproxy',
        '',
        '--proxy',
        proxyUrl(secretKey.apiKey),
        '--cacert',
        path.join(workDir, 'ca.pem'),
        `https://${PSP_HOST}:${sandboxTlsPort}/v1/charges`,
        '-u',
        'sk_test_sandbox:',
        '-d',
        'amount=1000',
        '-d',
        'currency=eur',
        '-d',
        `card[number]=${alias}`,
        '-d',
        'card[exp_month]=12',
        '-d',
        'card[exp_year]=2031',
        '-w',
        '\n%{http_code}',
      ],
      { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH } },
    );
    expect(result.stderr).toBe('');
    const [body, status] = result.stdout.split('\n');
    expect(status).toBe('200');
    expect(JSON.parse(body!)).toMatchObject({ status: 'succeeded', card: { last4: '4242' } });
    expect(result.stdout).not.toContain(TEST_CARDS.visa);
  });

  it('refuses a host on no outbound route with 403 before any TLS', async () => {
    const { head, body, socket } = await connect(`${OTHER_HOST}:${sandboxTlsPort}`, { 'Proxy-Authorization': basic(secretKey.apiKey) });
    expect(head).toMatch(/^HTTP\/1\.1 403/);
    expect(head).toMatch(/\r\nx-tessera-error: forward_proxy_host_forbidden/i);
    expect(JSON.parse(body).error).toMatchObject({ code: 'forward_proxy_host_forbidden', type: 'permission_error' });
    // The connection ends there: no tunnel, so no handshake to start.
    await new Promise((resolve) => socket.once('close', resolve));

    // The route's hosts are the merchant's and mode's only: a live key of the same merchant gets none.
    const live = env.stack.createKey(MERCHANT, 'live');
    const asLive = await connect(`${PSP_HOST}:${sandboxTlsPort}`, { 'Proxy-Authorization': basic(live.apiKey) });
    expect(asLive.head).toMatch(/^HTTP\/1\.1 403/);
    asLive.socket.destroy();
  });

  it('answers 407 with Proxy-Authenticate without a secret key, with a wrong one and with a publishable one', async () => {
    const publishable = env.stack.createPublishableKey(MERCHANT, ['https://shop.example']);
    const attempts: Record<string, string>[] = [
      {},
      { 'Proxy-Authorization': basic('tsk_test_00000000000000000000000000000000') },
      { 'Proxy-Authorization': basic(publishable.apiKey) },
      { 'Proxy-Authorization': 'Bearer whatever' },
    ];
    for (const headers of attempts) {
      const { head, body, socket } = await connect(`${PSP_HOST}:${sandboxTlsPort}`, headers);
      expect(head).toMatch(/^HTTP\/1\.1 407/);
      expect(head).toMatch(/\r\nproxy-authenticate: Basic realm="Tessera"/i);
      expect(head).toMatch(/\r\nx-tessera-error: proxy_authentication_required/i);
      expect(JSON.parse(body).error.code).toBe('proxy_authentication_required');
      socket.destroy();
    }
  });

  it('serves CONNECT only: a plain HTTP request to the port is refused', async () => {
    const res = await fetch(`http://127.0.0.1:${forwardProxyPort}/v1/charges`);
    expect(res.status).toBe(405);
    expect(res.headers.get('x-tessera-error')).toBe('forward_proxy_connect_only');
  });

  it('refuses a TLS client that names another host than its CONNECT', async () => {
    await expect(tunnel(`${PSP_HOST}:${sandboxTlsPort}`, OTHER_HOST)).rejects.toThrow();
  });

  it('applies the destination rules of /v1/proxy: a route host resolving to a private address, and a port outside the allowed ones', async () => {
    const viaProxy = async (host: string, port: number) => {
      const proxied = await asMerchant('POST', '/v1/proxy', {
        method: 'post',
        token,
        pspUrl: `https://${host}:${port}/v1/charges`,
        pspHeaders: { 'content-type': 'application/x-www-form-urlencoded' },
        pspBody: chargeForm('[CARD_NUMBER]'),
      });
      return { status: proxied.status, code: proxied.body?.error?.code, message: proxied.body?.error?.message };
    };
    const viaForward = async (host: string, port: number) => {
      const answer = parseAnswer(await rawThroughTunnel(`${host}:${port}`, chargeRequest(`${host}:${port}`, chargeForm(alias))));
      const error = JSON.parse(answer.body).error;
      expect(answer.headers['x-tessera-error']).toBe(error.code);
      return { status: answer.status, code: error.code, message: error.message };
    };
    const privateHost = await viaForward(PRIVATE_HOST, sandboxTlsPort);
    expect(privateHost).toMatchObject({ status: 400, code: 'psp_destination_forbidden' });
    expect(privateHost).toEqual(await viaProxy(PRIVATE_HOST, sandboxTlsPort));
    // Port 25 (SMTP) is outside PSP_ALLOWED_PORTS (1024-65535 in tests, besides 443 and 80).
    const smtp = await viaForward(PSP_HOST, 25);
    expect(smtp).toMatchObject({ status: 400, code: 'psp_destination_forbidden' });
    expect(smtp).toEqual(await viaProxy(PSP_HOST, 25));
  });

  it('refuses the header-smuggling shapes /v1/proxy refuses (400), and a body over its limit (413)', async () => {
    const gatewayPort = Number(new URL(env.stack.baseUrl).port);
    const plainGateway = async (request: string): Promise<number> => {
      const socket = net.connect(gatewayPort, '127.0.0.1');
      socket.write(request);
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      return parseAnswer(Buffer.concat(chunks).toString()).status;
    };
    const host = `${PSP_HOST}:${sandboxTlsPort}`;
    const body = chargeForm(alias);
    const smuggled = [
      // Transfer-Encoding beside Content-Length (RFC 9112 6.1).
      `POST /v1/charges HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n0\r\n\r\n`,
      // An obsolete line fold.
      `POST /v1/charges HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nX-Folded: a\r\n b\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      // Two Content-Lengths that disagree.
      `POST /v1/charges HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nContent-Length: 3\r\nConnection: close\r\n\r\n${body}`,
      // A space before the colon.
      `POST /v1/charges HTTP/1.1\r\nHost: ${host}\r\nContent-Length : ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ];
    for (const request of smuggled) {
      const forwarded = parseAnswer(await rawThroughTunnel(host, request));
      expect(forwarded.status).toBe(400);
      expect(forwarded.status).toBe(await plainGateway(request.replace('/v1/charges', '/v1/proxy')));
      // Tessera's answer, not a PSP's: the envelope and its header.
      expect(forwarded.headers['x-tessera-error']).toBe('invalid_request');
      expect(JSON.parse(forwarded.body).error.code).toBe('invalid_request');
    }
    // And a body over the limit: 413, as for /v1 (BODY_LIMIT_BYTES, 1 MiB).
    const tooLarge = parseAnswer(await rawThroughTunnel(host, chargeRequest(host, `${body}&pad=${'x'.repeat(1_048_576)}`)));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers['x-tessera-error']).toBe('body_too_large');
  });

  it('keeps a tunnel open for several requests (keep-alive), a Proxy-Authorization inside it not passed on', async () => {
    const secure = await tunnel(`${PSP_HOST}:${sandboxTlsPort}`);
    const host = `${PSP_HOST}:${sandboxTlsPort}`;
    const body = chargeForm(alias);
    const request = `POST /v1/charges HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nProxy-Authorization: ${basic(secretKey.apiKey)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    secure.write(request + request.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
    const chunks: Buffer[] = [];
    for await (const chunk of secure) chunks.push(chunk as Buffer);
    const answers = Buffer.concat(chunks)
      .toString()
      .split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(2);
    for (const answer of answers) expect(parseAnswer(answer)).toMatchObject({ status: 200 });
  });

  it('stops an open tunnel at its next request once its key is revoked', async () => {
    const key = env.stack.createKey(MERCHANT, 'test');
    const host = `${PSP_HOST}:${sandboxTlsPort}`;
    const { head, socket } = await connect(host, { 'Proxy-Authorization': basic(key.apiKey) });
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({ socket, servername: PSP_HOST, ca: caPem }, () => resolve(s));
      s.once('error', reject);
    });
    const chunks: Buffer[] = [];
    secure.on('data', (c: Buffer) => chunks.push(c));
    const answered = async (count: number) => {
      while (
        Buffer.concat(chunks)
          .toString()
          .split(/(?=HTTP\/1\.1 )/)
          .filter(Boolean).length < count
      ) {
        await new Promise((r) => setTimeout(r, 20));
      }
      return Buffer.concat(chunks)
        .toString()
        .split(/(?=HTTP\/1\.1 )/)
        .filter(Boolean);
    };
    const body = chargeForm(alias);
    const request = `POST /v1/charges HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    secure.write(request);
    expect(parseAnswer((await answered(1))[0]!).status).toBe(200);
    env.stack.revokeKey(key.id);
    secure.write(request);
    const refused = parseAnswer((await answered(2))[1]!);
    expect(refused.status).toBe(401);
    expect(refused.headers['x-tessera-error']).toBe('api_key_invalid');
    secure.destroy();
  });

  it('counts CONNECTs (established, 407, 403) and requests in tunnels in Prometheus, with no card data, alias, key, merchant or host', async () => {
    const counted = (text: string, labels: Record<string, string>) => sample(text, 'tessera_forward_proxy_requests_total', labels) ?? 0;
    const timed = (text: string, stage: string) => sample(text, 'tessera_forward_proxy_request_duration_seconds_count', { stage }) ?? 0;
    const before = await scrape(env.stack.gateway);

    const unauthenticated = await connect(`${PSP_HOST}:${sandboxTlsPort}`);
    expect(unauthenticated.head).toMatch(/^HTTP\/1\.1 407/);
    unauthenticated.socket.destroy();
    const forbidden = await connect(`${OTHER_HOST}:${sandboxTlsPort}`, { 'Proxy-Authorization': basic(secretKey.apiKey) });
    expect(forbidden.head).toMatch(/^HTTP\/1\.1 403/);
    forbidden.socket.destroy();
    const host = `${PSP_HOST}:${sandboxTlsPort}`;
    expect(parseAnswer(await rawThroughTunnel(host, chargeRequest(host, chargeForm(alias)))).status).toBe(200);

    const after = await scrape(env.stack.gateway);
    const moved = (labels: Record<string, string>) => counted(after, labels) - counted(before, labels);
    expect({
      established: moved({ stage: 'connect', outcome: 'established', status: '200' }),
      unauthenticated: moved({ stage: 'connect', outcome: 'proxy_authentication_required', status: '407' }),
      forbidden: moved({ stage: 'connect', outcome: 'forward_proxy_host_forbidden', status: '403' }),
      charged: moved({ stage: 'request', outcome: 'psp_2xx', status: '200' }),
      connectTimes: timed(after, 'connect') - timed(before, 'connect'),
      requestTimes: timed(after, 'request') - timed(before, 'request'),
    }).toEqual({ established: 1, unauthenticated: 1, forbidden: 1, charged: 1, connectTimes: 3, requestTimes: 1 });
    // The tunnels' smuggling shapes refused by Node's parser earlier were counted too.
    expect(counted(after, { stage: 'request', outcome: 'invalid_request', status: '400' })).toBeGreaterThan(0);

    for (const secret of [TEST_CARDS.visa, alias, token, secretKey.apiKey, MERCHANT, PSP_HOST, OTHER_HOST]) {
      expect({ secret, found: after.includes(secret) }).toEqual({ secret, found: false });
    }
    // Our own series only: a process metric (open file descriptors, say) may be any number.
    const ours = after
      .split('\n')
      .filter((line) => line.startsWith('tessera_forward_proxy_'))
      .join('\n');
    expect(ours).not.toMatch(new RegExp(`[^\\d.]${TEST_CVV}[^\\d.]`));
  });

  it('files every call in the request log and the detokenization audit, without card data', async () => {
    const entries = async () => (await platform.call('GET', `/requests?merchantId=${MERCHANT}&limit=200`)).body.entries as any[];
    let log = await entries();
    for (let i = 0; i < 100 && !log.some((e) => e.route === '/forward-proxy' && e.psp?.status === 200); i++) {
      await new Promise((r) => setTimeout(r, 50));
      log = await entries();
    }
    const forwarded = log.filter((e) => e.route === '/forward-proxy' && e.method === 'POST');
    expect(forwarded.length).toBeGreaterThan(0);
    const ok = forwarded.find((e) => e.psp?.status === 200 && e.keyId === secretKey.id);
    expect(ok).toMatchObject({
      keyId: secretKey.id,
      status: 200,
      psp: { host: `${PSP_HOST}:${sandboxTlsPort}`, method: 'POST', status: 200 },
    });
    // The entry's detail names the token whose card data went out, and the header names sent, never a
    // value; the Proxy-Authorization sent inside a tunnel was not among them.
    const details = await Promise.all(
      forwarded
        .filter((e) => e.psp?.status === 200)
        .map(async (e) => (await platform.call('GET', `/requests/${e.id}?merchantId=${MERCHANT}`)).body),
    );
    for (const entry of details) {
      expect(entry.psp).toMatchObject({ token, bodyTemplate: null });
      expect(entry.psp.headerNames.map((n: string) => n.toLowerCase())).not.toContain('proxy-authorization');
    }
    expect(details.some((entry) => entry.psp.headerNames.includes('Authorization'))).toBe(true);
    expect(log.some((e) => e.route === '/forward-proxy' && e.method === 'CONNECT' && e.status === 403)).toBe(true);

    const audit = (await platform.call('GET', `/detokenizations?merchantId=${MERCHANT}`)).body.entries as any[];
    expect(audit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          keyId: secretKey.id,
          token,
          pspHost: `${PSP_HOST}:${sandboxTlsPort}`,
          method: 'POST',
          status: 200,
          code: null,
        }),
        expect.objectContaining({ pspHost: `${PRIVATE_HOST}:${sandboxTlsPort}`, status: 400, code: 'psp_destination_forbidden' }),
      ]),
    );
    const shown = JSON.stringify({ log, audit, details });
    expect(shown).not.toContain(TEST_CARDS.visa);
    expect(findCardDataInLogs(env.stack.logs(), [TEST_CARDS.visa], [TEST_CVV])).toEqual([]);
  });
});
