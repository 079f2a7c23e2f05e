/**
 * Fault tests on real processes, each bounded in time: a vault killed with SIGKILL under load, a
 * Redis that stops and comes back, PSPs that hang or reset, and a "vault" that accepts TCP but
 * never speaks HTTP/2. The history checker proves that every token answered 201 still reads back
 * with its last4 and still renders, whatever happened in between.
 */
import net from 'node:net';
import { aCard, apiClient, restartRedis, TEST_CARDS, useStack } from './harness';

jest.setTimeout(120_000);

const PSP_TIMEOUT_MS = 1500;
const VAULT_TIMEOUT_MS = 1000;

const env = useStack({
  psp: true,
  env: {
    VAULT_TIMEOUT_MS: String(VAULT_TIMEOUT_MS),
    PSP_TIMEOUT_MS: String(PSP_TIMEOUT_MS),
    PSP_CONNECT_TIMEOUT_MS: '1000',
    PROXY_TIMEOUT_MS: '6000',
    REDIS_COMMAND_TIMEOUT_MS: '500',
  },
});
let call: ReturnType<typeof apiClient>;

beforeAll(() => {
  call = apiClient(env.stack, env.stack.createKey('acme').apiKey);
});

beforeEach(() => env.psp.reset());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cards = [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.amex, TEST_CARDS.visaDeclined];

interface Acknowledged {
  token: string;
  last4: string;
}

/** Every 201 of a run, and the statuses and durations of everything else. */
class History {
  acknowledged: Acknowledged[] = [];
  failures: Array<{ status: number; code: string | undefined; ms: number }> = [];

  async tokenize(number: string): Promise<void> {
    const started = Date.now();
    const res = await call('POST', '/v1/token', aCard({ number, cvv: number === TEST_CARDS.amex ? '0461' : '046' }));
    if (res.status === 201) this.acknowledged.push({ token: res.body.token, last4: res.body.last4 });
    else this.failures.push({ status: res.status, code: res.body?.error?.code, ms: Date.now() - started });
  }

  /** The check: every acknowledged token reads back with its last4 and renders its number. */
  async verify(): Promise<void> {
    for (const { token, last4 } of this.acknowledged) {
      const read = await call('GET', `/v1/token/${token}`);
      expect({ token, status: read.status, last4: read.body?.last4 }).toEqual({ token, status: 200, last4 });
    }
    env.psp.reset();
    for (const { token } of this.acknowledged) {
      const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/render`, pspBody: '[CARD_NUMBER]' });
      expect({ token, status: res.status }).toEqual({ token, status: 200 });
    }
    const rendered = env.psp.requests.map((r) => r.body.toString('utf8').slice(-4));
    expect(rendered).toEqual(this.acknowledged.map((a) => a.last4));
  }
}

/**
 * `total` tokenizations, `concurrency` at a time, by clients that back off 200 ms after a failed
 * attempt (as a merchant's retry loop would); `during(done)` runs alongside with the progress count.
 */
async function load(history: History, total: number, concurrency: number, during: (done: () => number) => Promise<void>): Promise<void> {
  let next = 0;
  let finished = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const failuresBefore = history.failures.length;
      await history.tokenize(cards[i % cards.length]!);
      finished++;
      if (history.failures.length > failuresBefore) await sleep(200);
    }
  };
  await Promise.all([...Array.from({ length: concurrency }, worker), during(() => finished)]);
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

it('kill -9 of the vault under load: 503 quickly while it is down, recovery without a gateway restart, and every 201 still renders', async () => {
  const history = new History();
  let acknowledgedBeforeRestart = 0;
  await load(history, 300, 10, async (done) => {
    while (done() < 100) await sleep(5);
    await env.stack.vault.stop('SIGKILL');
    await sleep(500);
    acknowledgedBeforeRestart = history.acknowledged.length;
    await env.stack.startVault();
  });
  expect(env.stack.gateway.running).toBe(true);
  // Requests fell into the outage, and each failed as a quick, clean 503 (never a 500) ...
  expect(history.failures.length).toBeGreaterThan(0);
  for (const failure of history.failures) {
    expect(failure).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(failure.ms).toBeLessThan(VAULT_TIMEOUT_MS + 1000);
  }
  // ... and the same gateway created tokens again once the vault was back.
  expect(history.acknowledged.length).toBeGreaterThan(acknowledgedBeforeRestart);
  expect(history.acknowledged.length + history.failures.length).toBe(300);
  // Recovered: new tokens are created again.
  await waitUntil(async () => (await call('POST', '/v1/token', aCard({ cvv: undefined }))).status === 201, 10_000);
  await history.verify();
});

it('Redis stopped: /readyz fails and tokenize answers 503 within 1 s; both recover when Redis returns with its data', async () => {
  const history = new History();
  for (const number of cards) await history.tokenize(number);
  expect(history.acknowledged).toHaveLength(4);

  await env.redis.process.stop('SIGKILL');
  const started = Date.now();
  const refused = await call('POST', '/v1/token', aCard());
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe('service_unavailable');
  expect(Date.now() - started).toBeLessThan(1000);
  const ready = await fetch(`${env.stack.baseUrl}/readyz`);
  expect(ready.status).toBe(503);

  await restartRedis(env.redis);
  await waitUntil(async () => (await fetch(`${env.stack.baseUrl}/readyz`)).status === 200, 15_000);
  await waitUntil(async () => (await call('POST', '/v1/token', aCard({ cvv: undefined }))).status === 201, 10_000);
  // AOF with fsync always: what was acknowledged before the crash is still there.
  await history.verify();
});

it('a PSP that accepts the connection and never answers: 504 psp_timeout within PSP_TIMEOUT_MS + 1 s', async () => {
  const { token } = (await call('POST', '/v1/token', aCard({ cvv: undefined }))).body;
  env.psp.reply = () => undefined; // read the request, never answer
  const started = Date.now();
  const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/hang`, pspBody: '[CARD_NUMBER]' });
  expect(res.status).toBe(504);
  expect(res.body.error.code).toBe('psp_timeout');
  expect(Date.now() - started).toBeLessThan(PSP_TIMEOUT_MS + 1000);
  // Sent once: a timed-out request is never retried on its own (it may have charged the card).
  expect(env.psp.requests).toHaveLength(1);
});

it('a PSP that resets the connection mid-response: 502 psp_unreachable, sent once', async () => {
  const { token } = (await call('POST', '/v1/token', aCard({ cvv: undefined }))).body;
  env.psp.reply = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"partial":');
    setTimeout(() => res.socket?.resetAndDestroy(), 50);
  };
  const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/reset`, pspBody: '[CARD_NUMBER]' });
  expect(res.status).toBe(502);
  expect(res.body.error.code).toBe('psp_unreachable');
  expect(env.psp.requests).toHaveLength(1);
});

it('a vault that accepts TCP but never speaks HTTP/2: tokenize 503 within the deadline, /readyz 503', async () => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    const replica = await env.stack.startGatewayReplica({ VAULT_ADDR: `127.0.0.1:${port}` }, { waitReady: false });
    const viaReplica = (route: string, body?: unknown) =>
      fetch(`${replica.baseUrl}${route}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'x-api-key': key.apiKey, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const key = env.stack.createKey('acme');
    const started = Date.now();
    const res = await viaReplica('/v1/token', aCard());
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
    expect(elapsed).toBeLessThan(VAULT_TIMEOUT_MS + 1000);
    expect(sockets.size).toBeGreaterThan(0); // it did reach the silent server
    expect((await viaReplica('/readyz')).status).toBe(503);
    await replica.process.stop();
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});
