import { apiClient, type ApiKey, useStack } from './harness';

jest.setTimeout(60_000);

let replicaUrl: string;
let acme: ApiKey;
let globex: ApiKey;

const PER_KEY = 5;
const FAILED_AUTH = 4;

const env = useStack({
  env: { RATE_LIMIT_PER_KEY_PER_SECOND: String(PER_KEY), RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: String(FAILED_AUTH) },
});

beforeAll(async () => {
  replicaUrl = (await env.stack.startGatewayReplica()).baseUrl;
  acme = env.stack.createKey('acme', 'test');
  globex = env.stack.createKey('globex', 'test');
});

function expectRateLimited(res: { status: number; headers: Headers; body: any }, maxSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get('x-tessera-error')).toBe('rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', requestId: res.headers.get('x-request-id') });
}

describe('rate limits against real gateways sharing one Redis', () => {
  it('limits a key per second across gateway replicas with 429 and Retry-After, and leaves other keys alone', async () => {
    const call = apiClient(env.stack, acme.apiKey);
    // Requests sent at once land in one or two one-second windows, so 3 x the limit must overflow.
    const burst = await Promise.all(
      Array.from({ length: PER_KEY * 3 }, (_, i) => {
        const url = i % 2 === 0 ? env.stack.baseUrl : replicaUrl;
        return fetch(`${url}/v1/token/tok.doesnotexist000000000000`, { headers: { 'x-api-key': acme.apiKey } }).then(async (r) => ({
          status: r.status,
          headers: r.headers,
          body: await r.json(),
        }));
      }),
    );
    const limited = burst.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(PER_KEY);
    for (const res of limited) expectRateLimited(res, 1);
    expect(burst.filter((r) => r.status === 404).length).toBeLessThanOrEqual(PER_KEY * 2);

    expect((await apiClient(env.stack, globex.apiKey)('GET', '/v1/token/tok.doesnotexist000000000000')).status).toBe(404);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call('GET', '/v1/token/tok.doesnotexist000000000000')).status).toBe(404);
  });

  it('answers 429 after repeated failed authentication from one address, on every replica, even for a valid key', async () => {
    const wrong = apiClient(env.stack, 'tsk_test_' + 'Z'.repeat(32));
    for (let i = 0; i < FAILED_AUTH; i++) expect((await wrong('GET', '/v1/token/tok.x')).status).toBe(401);
    expectRateLimited(await wrong('GET', '/v1/token/tok.x'), 60);
    expectRateLimited(await apiClient(env.stack, globex.apiKey)('GET', '/v1/token/tok.doesnotexist000000000000'), 60);
    const onReplica = await fetch(`${replicaUrl}/v1/token/tok.x`, { headers: { 'x-api-key': globex.apiKey } });
    expect(onReplica.status).toBe(429);
    expect(Number(onReplica.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Health checks carry no key and are never limited.
    expect((await fetch(`${env.stack.baseUrl}/healthz`)).status).toBe(200);
  });

  it('never writes an API key into a log line while limiting', () => {
    const logs = env.stack.logs();
    expect(logs).not.toContain(acme.apiKey);
    expect(logs).not.toContain(globex.apiKey);
  });
});
