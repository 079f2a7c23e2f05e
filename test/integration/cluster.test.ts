/**
 * The main flows on a real three-master Redis Cluster: keys CLI, tokenize/read/delete, proxy with
 * the one-use CVV, /readyz, and the vault CLI's SCAN, which must visit every master.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import {
  aCard,
  apiClient,
  PspRecorder,
  ROOT,
  startRedisCluster,
  startStack,
  TEST_CARDS,
  TEST_CVV,
  type RedisCluster,
  type Stack,
} from './harness';

jest.setTimeout(120_000);

let cluster: RedisCluster;
let stack: Stack;
let psp: PspRecorder;

beforeAll(async () => {
  cluster = await startRedisCluster();
  stack = await startStack(cluster, { env: { REDIS_CLUSTER_NODES: cluster.nodes.join(',') } });
  psp = await new PspRecorder().start();
});

afterAll(async () => {
  await psp?.stop();
  await stack?.stop();
  await cluster?.stop();
});

/** Card keys per master, read from each node directly (not through the cluster client). */
async function cardKeysPerMaster(): Promise<number[]> {
  return Promise.all(
    cluster.nodes.map(async (node) => {
      const [host, port] = node.split(':') as [string, string];
      const client = new Redis({ host, port: Number(port), lazyConnect: true });
      await client.connect();
      try {
        let cursor = '0';
        let count = 0;
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', 'tessera:card:{*', 'COUNT', 500);
          cursor = next;
          count += keys.length;
        } while (cursor !== '0');
        return count;
      } finally {
        client.disconnect();
      }
    }),
  );
}

/** The statuses of a merchant's detokenization audit entries and /v1/proxy request log entries, oldest first. */
async function proxyBookkeeping(merchantId: string): Promise<{ audited: number[]; logged: number[] }> {
  const client = new Cluster(cluster.nodes.map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) })));
  const statuses = async (key: string, field: string, route?: string): Promise<number[]> =>
    (await client.xrange(key, '-', '+'))
      .map(([, fields]) => JSON.parse(fields[fields.indexOf(field) + 1] ?? '{}') as { status: number; route?: string })
      .filter((entry) => route === undefined || entry.route === route)
      .map((entry) => entry.status);
  try {
    // Written after the answers: give them a moment.
    for (let i = 0; ; i++) {
      const found = {
        audited: await statuses(`tessera:detokenizations:{m:${merchantId}}`, 'entry'),
        logged: await statuses(`tessera:request-log:{m:${merchantId}}`, 'e', '/v1/proxy'),
      };
      if (i >= 20 || (found.audited.length >= 2 && found.logged.length >= 2)) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    client.disconnect();
  }
}

it('is ready on the cluster, and the keys CLI creates keys in it', async () => {
  expect((await fetch(`${stack.baseUrl}/readyz`)).status).toBe(200);
  const key = stack.createKey('acme');
  expect(key.apiKey).toMatch(/^tsk_test_/);
  expect((await apiClient(stack, key.apiKey)('GET', '/v1/token/tok.unknown')).status).toBe(404);
});

it('stores tokens across every master, reads, proxies (CVV once) and deletes them, and the vault CLI scans them all', async () => {
  const call = apiClient(stack, stack.createKey('acme').apiKey);
  const tokens: Array<{ token: string; last4: string }> = [];
  const numbers = [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.visaDeclined];
  for (let i = 0; i < 30; i++) {
    const res = await call('POST', '/v1/token', aCard({ number: numbers[i % numbers.length] }));
    expect(res.status).toBe(201);
    tokens.push({ token: res.body.token, last4: res.body.last4 });
  }
  // 30 random tokens over three masters: each master holds some (the chance of one empty is ~1e-5).
  const perMaster = await cardKeysPerMaster();
  expect(perMaster.every((n) => n > 0)).toBe(true);
  expect(perMaster.reduce((a, b) => a + b, 0)).toBe(30);

  for (const { token, last4 } of tokens) {
    const res = await call('GET', `/v1/token/${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ last4, cvvAvailable: true });
  }

  const first = tokens[0]!.token;
  const body = { method: 'post', token: first, pspUrl: `${psp.url}/charge`, pspBody: '[CARD_NUMBER]|[CARD_CVV]' };
  expect((await call('POST', '/v1/proxy', body)).status).toBe(200);
  expect(psp.requests.map((r) => r.body.toString())).toEqual([`${TEST_CARDS.visa}|${TEST_CVV}`]);
  const again = await call('POST', '/v1/proxy', body);
  expect(again.status).toBe(422);
  expect(again.body.error.code).toBe('cvv_unavailable');
  // Both calls rendered card data: each has its audit entry and its request log entry, written
  // after the answer, both in the merchant's slot.
  expect(await proxyBookkeeping('acme')).toEqual({ audited: [200, 422], logged: [200, 422] });

  // The vault CLI's SCAN walks every master: status counts all 30 records, rewrap visits all 30.
  const vaultCli = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'services/vault/dist/cli/vault.js'), ...args], {
      cwd: ROOT,
      env: stack.env,
      encoding: 'utf8',
      timeout: 30_000,
    });
  const status = vaultCli('status', '--json', '--batch', '7');
  expect(status.stderr).toBe('');
  // Every card's data key is under its merchant's key (issue 29), on whichever master the card landed.
  const usage = JSON.parse(status.stdout) as { underMerchantKeys: { card: number } };
  expect(usage.underMerchantKeys.card).toBe(30);
  const rewrap = vaultCli('rewrap', '--batch', '7');
  expect(rewrap.status).toBe(0);
  expect(JSON.parse(rewrap.stdout.trim().split('\n').pop() ?? '')).toMatchObject({ done: true, scanned: 30, failed: 0 });

  // A plain create indexes its card in the fingerprint's own slot (usually on another master):
  // dedupe answers the first token made for the card.
  const deduplicated = await call('POST', '/v1/token', aCard({ number: TEST_CARDS.mastercard, dedupe: true }));
  expect({ status: deduplicated.status, token: deduplicated.body.token }).toEqual({ status: 200, token: tokens[1]!.token });

  expect((await call('DELETE', `/v1/token/${first}`)).status).toBe(204);
  expect((await call('GET', `/v1/token/${first}`)).status).toBe(404);
  expect((await cardKeysPerMaster()).reduce((a, b) => a + b, 0)).toBe(29);
});

it('keeps and replays an Idempotency-Key answer, and counts it against the merchant’s quota, on the cluster', async () => {
  const call = apiClient(stack, stack.createKey('idem-cluster').apiKey);
  const first = await call('POST', '/v1/token', aCard(), { 'idempotency-key': 'cluster-1' });
  expect(first.status).toBe(201);
  const replay = await call('POST', '/v1/token', aCard(), { 'idempotency-key': 'cluster-1' });
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body).toEqual(first.body);
  // The claim script reads the record and the usage counters in one call: they share the merchant's hash tag.
  const client = new Cluster(cluster.nodes.map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) })));
  try {
    const hour = Math.floor(Date.now() / 3_600_000);
    const counters = await Promise.all(
      [hour, hour - 1].map((slice) => client.get(`tessera:idempotency-usage:{m:idem-cluster}:test:${slice}`)),
    );
    expect(counters.reduce((sum, c) => sum + Number(c ?? 0), 0)).toBeGreaterThan(0);
  } finally {
    client.disconnect();
  }
});
