import { aCard, apiClient, useStack } from './harness';

jest.setTimeout(60_000);

const env = useStack({ env: { GATEWAY_WORKERS: '2' } });

beforeAll(async () => {
  // The harness waits for the first 'gateway listening'; the second worker follows shortly.
  const deadline = Date.now() + 15_000;
  while (env.stack.gateway.output.split('gateway listening').length - 1 < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
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
  expect(env.stack.gateway.output.split('gateway listening').length - 1).toBe(2);
  const call = apiClient(env.stack, env.stack.createKey('acme').apiKey);
  for (let i = 0; i < 20; i++) {
    // A fresh connection each time, so the primary hands them out to both workers.
    const res = await call('POST', '/v1/token', aCard(), { connection: 'close' });
    expect(res.status).toBe(201);
  }
  expect(workersIn(env.stack.gateway.output).size).toBe(2);
});

it('applies a revocation on every worker from the next request on', async () => {
  const key = env.stack.createKey('acme');
  const call = apiClient(env.stack, key.apiKey);
  expect((await call('POST', '/v1/token', aCard(), { connection: 'close' })).status).toBe(201);
  env.stack.revokeKey(key.id);
  for (let i = 0; i < 10; i++) {
    const res = await call('POST', '/v1/token', aCard(), { connection: 'close' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('api_key_invalid');
  }
});

it('stops every worker on SIGTERM', async () => {
  await env.stack.gateway.stop('SIGTERM');
  expect(env.stack.gateway.running).toBe(false);
  expect(env.stack.gateway.output).toContain('gateway workers stopped');
});
