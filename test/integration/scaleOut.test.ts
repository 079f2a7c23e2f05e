/**
 * Scale-out: two vault and two proxy processes behind one gateway, over mTLS, each client
 * dialling a static list of replicas. Every replica must get its share of the calls (counted by
 * its own Prometheus metrics), a killed replica must cost only the calls in flight on it, and a
 * replica that cannot reach its Redis must leave the rotation. docs/scaling.md quotes the figures
 * this test logs.
 */
import {
  aCard,
  apiClient,
  type ApiKey,
  type ManagedProcess,
  PspRecorder,
  type RedisServer,
  type Stack,
  startRedis,
  startStack,
} from './harness';

jest.setTimeout(180_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: RedisServer;
let stack: Stack;
let psp: PspRecorder;
let key: ApiKey;
let call: ReturnType<typeof apiClient>;

beforeAll(async () => {
  redis = await startRedis();
  psp = await new PspRecorder().start();
  stack = await startStack(redis, { vaultReplicas: 2, proxyReplicas: 2, tls: true, env: { METRICS_PORT: '0' } });
  key = stack.createKey('acme-scale');
  call = apiClient(stack, key.apiKey);
});

afterAll(async () => {
  await psp?.stop();
  await stack?.stop();
  await redis?.stop();
});

/** Sum of tessera_rpc_requests_total{rpc} over every outcome, from the process's own /metrics. */
async function served(proc: ManagedProcess, rpc: string): Promise<number> {
  const url = [...proc.output.matchAll(/"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/g)].pop()?.[1];
  if (url === undefined) throw new Error(`${proc.name} logged no metrics URL`);
  const text = await (await fetch(url)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('tessera_rpc_requests_total{') && line.includes(`rpc="${rpc}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

async function servedBy(procs: ManagedProcess[], rpc: string): Promise<number[]> {
  return Promise.all(procs.map((p) => served(p, rpc)));
}

const delta = (after: number[], before: number[]) => after.map((n, i) => n - (before[i] ?? 0));
const shares = (counts: number[]) => counts.map((n) => n / counts.reduce((a, b) => a + b, 0));

/**
 * `total` requests from `workers` concurrent clients, each pausing a random 0–10 ms before its next
 * request, as independent merchants would: requests meet in batches of varying size, and no fixed
 * rhythm lines big batches up with one replica.
 */
async function send(total: number, workers: number, request: () => Promise<{ status: number }>): Promise<number[]> {
  const statuses: number[] = [];
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < total) {
      started++;
      await sleep(Math.random() * 10);
      statuses.push((await request()).status);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return statuses;
}

const tokenizeOne = () => call('POST', '/v1/token', aCard({ cvv: undefined }));

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(200);
  }
}

/** Sends small waves until vault replica `index` has served a tokenization since `since`. */
async function untilVaultServes(index: number): Promise<void> {
  const vault = stack.vaults[index] as ManagedProcess;
  const before = await served(vault, 'Tokenize');
  await waitUntil(`vault ${index} to get traffic again`, async () => {
    await send(4, 2, tokenizeOne);
    return (await served(vault, 'Tokenize')) > before;
  });
}

it('spreads 200 tokenizations over both vaults and 100 proxy calls over both proxies (and their renders over both vaults), each 30–70 %', async () => {
  const tokenizeBefore = await servedBy(stack.vaults, 'Tokenize');
  const batchesBefore = await servedBy(stack.vaults, 'TokenizeBatch');
  const statuses = await send(200, 10, tokenizeOne);
  expect(statuses.filter((s) => s === 201)).toHaveLength(200);
  const tokenize = delta(await servedBy(stack.vaults, 'Tokenize'), tokenizeBefore);
  const batches = delta(await servedBy(stack.vaults, 'TokenizeBatch'), batchesBefore);

  const token = (await call('POST', '/v1/token', aCard({ cvv: undefined }))).body.token as string;
  const forwardBefore = await servedBy(stack.proxies, 'Forward');
  const renderBefore = await servedBy(stack.vaults, 'Render');
  const proxied = await send(100, 5, () =>
    call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${psp.url}/pay`, pspBody: 'pan=[CARD_NUMBER]' }),
  );
  expect(proxied.filter((s) => s === 200)).toHaveLength(100);
  const forward = delta(await servedBy(stack.proxies, 'Forward'), forwardBefore);
  const render = delta(await servedBy(stack.vaults, 'Render'), renderBefore);

  // For docs/scaling.md: how the calls fell.
  process.stdout.write(
    `scale-out split: Tokenize ${tokenize.join('/')} (in ${batches.join('/')} batches), Forward ${forward.join('/')}, Render ${render.join('/')}\n`,
  );
  expect(tokenize.reduce((a, b) => a + b)).toBe(200);
  expect(forward.reduce((a, b) => a + b)).toBe(100);
  expect(render.reduce((a, b) => a + b)).toBe(100);
  for (const share of [...shares(tokenize), ...shares(forward), ...shares(render)]) {
    expect(share).toBeGreaterThanOrEqual(0.3);
    expect(share).toBeLessThanOrEqual(0.7);
  }
});

it('survives kill -9 of one vault under load: only calls in flight on it fail, and traffic returns to it after a restart, without restarting the gateway', async () => {
  const gatewayOutputBefore = stack.gateway.output.length;
  const concurrency = 8;
  const results: Array<{ startedAt: number; status: number; code?: string }> = [];
  let killedAt = Number.POSITIVE_INFINITY;
  let stop = false;
  const worker = async (): Promise<void> => {
    while (!stop) {
      const startedAt = Date.now();
      const res = await tokenizeOne();
      results.push({ startedAt, status: res.status, code: res.body?.error?.code });
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await waitUntil('load to build up', async () => results.length >= 100);
  killedAt = Date.now();
  await stack.vaults[1]?.stop('SIGKILL');
  // Load goes on through the other vault: 50 calls started a second after the kill or later.
  const startedAfterKill = () => results.filter((r) => r.startedAt > killedAt + 1000);
  await waitUntil('load to go on through the other vault', async () => startedAfterKill().length >= 50);
  stop = true;
  await Promise.all(workers);

  const failures = results.filter((r) => r.status !== 201);
  const after = startedAfterKill();
  process.stdout.write(`kill -9: ${results.length} calls, ${failures.length} failed, ${after.length} after the kill all 201\n`);
  // At most the calls in flight when it died (fewer than the concurrency), each a clean 503.
  expect(failures.length).toBeLessThanOrEqual(concurrency);
  for (const failure of failures) {
    expect(failure).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(failure.startedAt).toBeLessThan(killedAt + 1000);
  }
  expect(after.length).toBeGreaterThan(20);
  expect(after.every((r) => r.status === 201)).toBe(true);

  await stack.startVault(1);
  await untilVaultServes(1);
  const before = await servedBy(stack.vaults, 'Tokenize');
  expect((await send(100, 10, tokenizeOne)).every((s) => s === 201)).toBe(true);
  const split = delta(await servedBy(stack.vaults, 'Tokenize'), before);
  process.stdout.write(`after restart: Tokenize ${split.join('/')}\n`);
  for (const share of shares(split)) expect(share).toBeGreaterThanOrEqual(0.3);
  // The same gateway process all along.
  expect(stack.gateway.running).toBe(true);
  expect(stack.gateway.output.slice(gatewayOutputBefore)).not.toContain('gateway listening');
});

it('takes a vault whose Redis is unreachable out of rotation: it receives no new calls 2 s later, and every call succeeds through the other', async () => {
  // Vault 1 gets a Redis of its own, so that only its store can fail.
  const ownRedis = await startRedis();
  try {
    await stack.vaults[1]?.stop();
    await stack.startVault(1, { REDIS_URL: ownRedis.url });
    await untilVaultServes(1);

    await ownRedis.process.stop('SIGKILL');
    await sleep(2000);
    const before = await servedBy(stack.vaults, 'Tokenize');
    const statuses = await send(100, 10, tokenizeOne);
    const split = delta(await servedBy(stack.vaults, 'Tokenize'), before);
    process.stdout.write(`own Redis killed: Tokenize ${split.join('/')}\n`);
    expect(split).toEqual([100, 0]);
    expect(statuses.every((s) => s === 201)).toBe(true);
  } finally {
    await ownRedis.stop();
  }
});
