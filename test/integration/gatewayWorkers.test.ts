import { aCard, apiClient, startRedis, startStack, type RedisServer, type Stack } from './harness';

jest.setTimeout(60_000);

let redis: RedisServer;
let stack: Stack;

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(redis, { env: { GATEWAY_WORKERS: '2' } });
  // The harness waits for the first 'gateway listening'; the second worker follows shortly.
  const deadline = Date.now() + 15_000;
  while (stack.gateway.output.split('gateway listening').length - 1 < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
});

afterAll(async () => {
  await stack?.stop();
  await redis?.stop();
});

/** The workers that answered, taken from their access log lines. */
function workersIn(output: string): Set<number> {
  const workers = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.includes('"msg":"request"')) continue;
    const worker = (JSON.parse(line) as { worker?: number }).worker;
    if (typeof worker === 'number') workers.add(worker);
  }
  return workers;
}

it('serves the public port from two worker processes when GATEWAY_WORKERS=2', async () => {
  expect(stack.gateway.output.split('gateway listening').length - 1).toBe(2);
  const call = apiClient(stack, stack.createKey('acme').apiKey);
  for (let i = 0; i < 20; i++) {
    // A fresh connection each time, so the primary hands them out to both workers.
    const res = await call('POST', '/v1/token', aCard(), { connection: 'close' });
    expect(res.status).toBe(201);
  }
  expect(workersIn(stack.gateway.output).size).toBe(2);
});

it('applies a revocation on every worker from the next request on', async () => {
  const key = stack.createKey('acme');
  const call = apiClient(stack, key.apiKey);
  expect((await call('POST', '/v1/token', aCard(), { connection: 'close' })).status).toBe(201);
  stack.revokeKey(key.id);
  for (let i = 0; i < 10; i++) {
    const res = await call('POST', '/v1/token', aCard(), { connection: 'close' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('api_key_invalid');
  }
});

it('stops every worker on SIGTERM', async () => {
  await stack.gateway.stop('SIGTERM');
  expect(stack.gateway.running).toBe(false);
  expect(stack.gateway.output).toContain('gateway workers stopped');
});
