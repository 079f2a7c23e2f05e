/**
 * Development start-up against a Redis that is up but refuses writes at first (NOREPLICAS, as a
 * Redis with `min-replicas-to-write` and no replica does): the gateway keeps trying to register
 * TESSERA_DEV_API_KEY with backoff, /readyz says not ready until it has, and the key works as
 * soon as Redis takes writes, with no reconnect needed.
 */
import { spawnSync } from 'node:child_process';
import { useStack } from './harness';

jest.setTimeout(60_000);

const DEV_KEY = `tsk_test_${'d'.repeat(32)}`;
const env = useStack();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function redisConfigSet(port: number, name: string, value: string): void {
  const result = spawnSync('redis-cli', ['-p', String(port), 'config', 'set', name, value], { encoding: 'utf8', timeout: 5_000 });
  if (result.status !== 0 || !result.stdout.includes('OK')) throw new Error(`CONFIG SET ${name} failed: ${result.stderr}${result.stdout}`);
}

it('retries registering TESSERA_DEV_API_KEY while Redis refuses writes, is not ready meanwhile, and serves the key once Redis recovers', async () => {
  redisConfigSet(env.redis.port, 'min-replicas-to-write', '1');
  let restored = false;
  try {
    const gateway = await env.stack.startGatewayReplica({ TESSERA_DEV_API_KEY: DEV_KEY }, { waitReady: false });
    const ready = async () => {
      const res = await fetch(`${gateway.baseUrl}/readyz`);
      return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
    };
    const tokenize = () =>
      fetch(`${gateway.baseUrl}/v1/token/tok.unknown`, { headers: { 'x-api-key': DEV_KEY } }).then((res) => res.status);

    await sleep(1500);
    const whileRefused = await ready();
    expect(whileRefused.status).toBe(503);
    expect(whileRefused.body.checks.devApiKey).toBe('unavailable');
    expect(await tokenize()).toBe(401);

    redisConfigSet(env.redis.port, 'min-replicas-to-write', '0');
    restored = true;
    // Backoff is capped at 5 s; the key is registered by the next attempt.
    const deadline = Date.now() + 15_000;
    let after = await ready();
    while (after.status !== 200 && Date.now() < deadline) {
      await sleep(200);
      after = await ready();
    }
    expect(after).toMatchObject({ status: 200, body: { checks: { devApiKey: 'ok' } } });
    // Authenticated: an unknown token is a 404, not a 401.
    expect(await tokenize()).toBe(404);
    expect(gateway.process.output).toContain('could not register TESSERA_DEV_API_KEY');
  } finally {
    if (!restored) redisConfigSet(env.redis.port, 'min-replicas-to-write', '0');
  }
});
