/**
 * Deadlines nest: the vault's card-store timeout (REDIS_COMMAND_TIMEOUT_MS, 1000 by default) is
 * inside the gateway's VAULT_TIMEOUT_MS (2000), so a stalled card store answers the documented
 * `503 service_unavailable` within REDIS_COMMAND_TIMEOUT_MS, never the gateway's
 * `504 upstream_timeout`, and a 503 frees the Idempotency-Key. The gateway's own Redis
 * (API keys) is bounded by its REDIS_COMMAND_TIMEOUT_MS (1000) the same way. The stack runs on its
 * default timeouts; the vault has a Redis of its own, so each store can stall alone (DEBUG SLEEP).
 */
import { Redis } from 'ioredis';
import { aCard, apiClient, startRedisServer, useStack, type RedisServerHandle } from './harness';

jest.setTimeout(60_000);

/** The documented default of the vault's REDIS_COMMAND_TIMEOUT_MS (docs/configuration.md). */
const REDIS_COMMAND_TIMEOUT_MS = 1000;
/** Scheduling and HTTP on a loaded test machine; far below the 1000 ms the old timeouts were off by. */
const MARGIN_MS = 400;

let cardStore: RedisServerHandle;
beforeAll(async () => {
  cardStore = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always', '--enable-debug-command', 'yes']);
});
const env = useStack(() => ({ redis: { args: ['--enable-debug-command', 'yes'] }, serviceEnv: { vault: { REDIS_URL: cardStore.url } } }));
// Declared after useStack: hooks run in order, so the vault stops before its Redis does.
afterAll(async () => {
  await cardStore?.stop();
});
let call: ReturnType<typeof apiClient>;

beforeAll(() => {
  call = apiClient(env.stack, env.stack.createKey('acme').apiKey);
});

/**
 * How long a stall lasts: the last request is sent 0.35 s into it and must be answered within
 * REDIS_COMMAND_TIMEOUT_MS + MARGIN_MS, so 1.75 s in at the latest; any request that a shorter
 * stall would let through has already failed that bound.
 */
const STALL_SECONDS = 2;

/** Blocks a Redis for STALL_SECONDS (the card store's unless told); `over` resolves once it answers again. */
async function stallCardStore(url = cardStore.url): Promise<{ over: Promise<unknown> }> {
  const client = new Redis(url, { lazyConnect: true });
  await client.connect();
  const over = client.call('DEBUG', 'SLEEP', String(STALL_SECONDS)).finally(() => client.disconnect());
  await new Promise((r) => setTimeout(r, 50)); // let Redis start sleeping
  return { over };
}

async function timed<T>(request: Promise<T>): Promise<T & { ms: number }> {
  const started = Date.now();
  const res = await request;
  return { ...res, ms: Date.now() - started };
}

it('a stalled card store: tokenize and read answer 503 service_unavailable within REDIS_COMMAND_TIMEOUT_MS, also when requests queue', async () => {
  const { token } = (await call('POST', '/v1/token', aCard())).body as { token: string };
  const { over } = await stallCardStore();
  // Concurrent requests share the vault's Redis connection: later ones queue behind the first.
  const first = Array.from({ length: 6 }, () => timed(call('POST', '/v1/token', aCard())));
  await new Promise((r) => setTimeout(r, 300));
  const later = [timed(call('POST', '/v1/token', aCard())), timed(call('GET', `/v1/token/${token}`))];
  const answers = await Promise.all([...first, ...later]);
  for (const res of answers) {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    expect(res.ms).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + MARGIN_MS);
  }
  await over;
  expect((await call('POST', '/v1/token', aCard())).status).toBe(201);
});

it('a 503 from a stalled card store frees the Idempotency-Key: the retry after the stall creates the token', async () => {
  const headers = { 'idempotency-key': `stall-${Date.now()}` };
  const { over } = await stallCardStore();
  const refused = await call('POST', '/v1/token', aCard(), headers);
  expect({ status: refused.status, code: refused.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
  await over;
  const retried = await call('POST', '/v1/token', aCard(), headers);
  expect(retried.status).toBe(201);
  // ... and that answer is the one stored and replayed from now on.
  const replayed = await call('POST', '/v1/token', aCard(), headers);
  expect(replayed.status).toBe(201);
  expect(replayed.body.token).toBe(retried.body.token);
});

it("a stalled gateway Redis: requests answer 503 service_unavailable within the gateway's REDIS_COMMAND_TIMEOUT_MS, also when they queue", async () => {
  const GATEWAY_REDIS_COMMAND_TIMEOUT_MS = 1000; // its documented default
  const { over } = await stallCardStore(env.redis.url);
  const first = Array.from({ length: 6 }, () => timed(call('POST', '/v1/token', aCard())));
  await new Promise((r) => setTimeout(r, 300));
  const later = Array.from({ length: 3 }, () => timed(call('POST', '/v1/token', aCard())));
  for (const res of await Promise.all([...first, ...later])) {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
    expect(res.ms).toBeLessThan(GATEWAY_REDIS_COMMAND_TIMEOUT_MS + MARGIN_MS);
  }
  await over;
  expect((await call('POST', '/v1/token', aCard())).status).toBe(201);
});

it("the proxy says when the gateway's PROXY_TIMEOUT_MS is shorter than its own connect + vault + PSP budget", async () => {
  const { token } = (await call('POST', '/v1/token', aCard())).body as { token: string };
  const forward = (baseUrl: string) =>
    fetch(`${baseUrl}/v1/proxy`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'post', token, pspUrl: 'http://127.0.0.1:1/charge', pspBody: '[CARD_NUMBER]' }),
    });
  const key = env.stack.createKey('acme').apiKey;
  const warning = 'shorter than PSP_CONNECT_TIMEOUT_MS + VAULT_TIMEOUT_MS + PSP_TIMEOUT_MS';
  await forward(env.stack.baseUrl); // the defaults nest: 40 s around 5 + 2 + 30 s
  expect(env.stack.proxy.output).not.toContain(warning);
  const replica = await env.stack.startGatewayReplica({ PROXY_TIMEOUT_MS: '5000' });
  await forward(replica.baseUrl);
  expect(env.stack.proxy.output).toContain(warning);
  await replica.process.stop();
});
