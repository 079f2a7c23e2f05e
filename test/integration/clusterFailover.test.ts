/**
 * A real Redis Cluster of three masters, each with a replica, and the vault in replica:1 mode
 * (VAULT_WRITE_ACK=replica:1:500, so every card write is followed by WAIT on its master). The
 * cluster changes under the stack as it does in production: a slot moves to another master, a
 * master dies and its replica takes over, and a master dies with no replica left. Writes must
 * follow the cluster, one dead master must fail only the cards whose slots it holds, and every
 * token answered 201 must read back.
 */
import {
  aCard,
  apiClient,
  clusterNodes,
  clusterStateOk as clusterStateOkVia,
  connectNode as connect,
  nodeProcess,
  replicasInSync as replicasInSyncVia,
  restartClusterNode,
  startRedisCluster,
  startStack,
  TEST_CARDS,
  waitUntil,
  type ManagedProcess,
  type RedisCluster,
  type Stack,
} from './harness';

jest.setTimeout(180_000);

let cluster: RedisCluster;
let stack: Stack;
let call: ReturnType<typeof apiClient>;
/** Every token answered 201 in this file, with the last4 it must read back with. */
const acknowledged: Array<{ token: string; last4: string }> = [];
/** The masters the slot move touched; the failures happen on the third. */
const touched: string[] = [];
/** A node that stays up throughout, to ask about the cluster. */
let observer = '';

beforeAll(async () => {
  // A short node timeout fails a dead master over in a few seconds (shorter ones fail healthy
  // nodes over on a loaded test machine); without full coverage the live masters keep serving
  // while a dead one's slots have no owner.
  cluster = await startRedisCluster({ replicas: 1, nodeTimeoutMs: 2500, args: ['--cluster-require-full-coverage', 'no'] });
  stack = await startStack(cluster, {
    env: { REDIS_CLUSTER_NODES: cluster.nodes.join(','), VAULT_WRITE_ACK: 'replica:1:800' },
    // Room for a loaded machine, still inside the gateway's VAULT_TIMEOUT_MS (2000).
    serviceEnv: { vault: { REDIS_COMMAND_TIMEOUT_MS: '1500' } },
  });
  call = apiClient(stack, stack.createKey('acme').apiKey);
});

afterAll(async () => {
  await stack?.stop();
  await cluster?.stop();
});

function processOf(address: string): ManagedProcess {
  return nodeProcess(cluster, address);
}

const restartNode = (address: string): Promise<void> => restartClusterNode(cluster, address);
const replicasInSync = (): Promise<boolean> => replicasInSyncVia(observer);
const clusterStateOk = (): Promise<boolean> => clusterStateOkVia(observer);

const numbers = [TEST_CARDS.visa, TEST_CARDS.mastercard, TEST_CARDS.visaDeclined];

/** `count` tokenizations, `concurrency` at a time (concurrent ones reach the vault as TokenizeBatch calls). */
async function tokenize(count: number, concurrency: number): Promise<Array<{ status: number; code?: string }>> {
  const answers: Array<{ status: number; code?: string }> = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const res = await call('POST', '/v1/token', aCard({ number: numbers[i % numbers.length] }));
      if (res.status === 201) acknowledged.push({ token: res.body.token, last4: res.body.last4 });
      answers.push({ status: res.status, code: res.body?.error?.code });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return answers;
}

const statuses = (answers: Array<{ status: number }>) => answers.map((a) => a.status);

/**
 * Each token reads back with its last4. A dozen reads at a time: with a master down a read can
 * take the gateway about a second, and one at a time the last test spent most of its time here.
 */
async function expectReadBack(tokens: Array<{ token: string; last4: string }>): Promise<void> {
  for (let i = 0; i < tokens.length; i += 12) {
    await Promise.all(
      tokens.slice(i, i + 12).map(async ({ token, last4 }) => {
        const read = await call('GET', `/v1/token/${token}`);
        expect({ token, status: read.status, last4: read.body?.last4 }).toEqual({ token, status: 200, last4 });
      }),
    );
  }
}

/**
 * Known gateway issue, outside these tests: the first rate-limit script call that reaches a master
 * through a moved or migrating slot answers 503 NOSCRIPT. Warm the gateway up so only card writes are judged.
 */
async function warmUpGateway(): Promise<void> {
  await waitUntil(
    async () => (await Promise.all(Array.from({ length: 10 }, () => call('GET', '/v1/token/tok.unknown')))).every((r) => r.status === 404),
    'the gateway to authenticate through the moved slots',
  );
}

let moving: number[] = [];

it('follows slots that moved to another master (MOVED): every write in replica:1 mode is acknowledged', async () => {
  const before = await clusterNodes(cluster.nodes[0]!);
  const masters = before.filter((n) => n.master && n.slots.length > 0);
  // The gateway keeps the merchant's keys in its {m:acme} slot: its master is `from` (whose
  // non-empty slots stay), so the third master, which the next tests kill, never holds it.
  const probe = connect(cluster.nodes[0]!);
  await probe.connect();
  const gatewaySlot = (await probe.call('CLUSTER', 'KEYSLOT', '{m:acme}')) as number;
  probe.disconnect();
  const from = masters.find((m) => m.slots.includes(gatewaySlot))!;
  const to = masters.find((m) => m !== from)!;
  touched.push(from.id, to.id);
  observer = to.address;
  // The empty slots of one master (all but its last, so it stays a master), moved to another the
  // way a resharding tool ends a migration: CLUSTER SETSLOT <slot> NODE <id> on every node.
  const source = connect(from.address);
  await source.connect();
  const counts = await Promise.all(from.slots.map((slot) => source.call('CLUSTER', 'COUNTKEYSINSLOT', slot) as Promise<number>));
  source.disconnect();
  moving = from.slots.filter((slot, i) => counts[i] === 0 && slot !== from.slots[from.slots.length - 1]);
  expect(moving.length).toBeGreaterThan(1000);
  // As redis-cli --cluster reshard does: importing on the target, migrating on the source. While a
  // slot migrates Redis refuses a transaction over keys the target does not have yet (ASK, then
  // TRYAGAIN), which a new token's card and CVV always are: those cards get 503, the others 201.
  // Then the new owner on the target (which bumps its config epoch so the move wins), the source
  // and the other masters. Replicas refuse SETSLOT and learn by gossip.
  const setSlots = async (steps: Array<[string, string[]]>): Promise<void> => {
    for (const [address, args] of steps) {
      const node = connect(address);
      await node.connect();
      const pipeline = node.pipeline();
      for (const slot of moving) pipeline.call('CLUSTER', 'SETSLOT', slot, ...args);
      const results = (await pipeline.exec()) ?? [];
      node.disconnect();
      expect(results.filter(([err]) => err !== null)).toEqual([]);
    }
  };
  await setSlots([
    [to.address, ['IMPORTING', from.id]],
    [from.address, ['MIGRATING', to.id]],
  ]);
  await warmUpGateway();
  const duringMigration = await tokenize(30, 3);
  for (const answer of duringMigration) {
    if (answer.status !== 201) expect(answer).toEqual({ status: 503, code: 'service_unavailable' });
  }
  expect(duringMigration.filter((a) => a.status === 201).length).toBeGreaterThan(5);

  const others = masters.filter((m) => m !== from && m !== to).map((m) => m.address);
  await setSlots([
    [to.address, ['NODE', to.id]],
    [from.address, ['NODE', to.id]],
    ...others.map((address): [string, string[]] => [address, ['NODE', to.id]]),
  ]);
  const ownerSeenBy = async (address: string) => (await clusterNodes(address)).find((n) => n.slots.includes(moving[0]!))?.id;
  await waitUntil(
    async () => (await Promise.all(cluster.nodes.map(ownerSeenBy))).every((id) => id === to.id),
    'every node to see the slot move',
  );
  await waitUntil(replicasInSync, 'every replica in sync');
  await waitUntil(clusterStateOk, 'every node to report cluster_state:ok');
  await warmUpGateway();

  // A third of all tokens now hash to a moved slot: each must be written on its new master.
  const answers = await tokenize(45, 3);
  expect(statuses(answers)).toEqual(answers.map(() => 201));
});

it('heals after a master dies: its replica takes over, and once that has a replica again every write is acknowledged', async () => {
  const nodes = await clusterNodes(observer);
  const victim = nodes.find((n) => n.master && n.slots.length > 0 && !touched.includes(n.id))!;
  const replica = nodes.find((n) => !n.master && n.masterId === victim.id)!;
  expect(replica).toBeDefined();

  await processOf(victim.address).stop('SIGKILL');
  // Tokens go on meanwhile: those for the dead master's slots fail (503), the others succeed.
  const during = tokenize(30, 3);
  await waitUntil(
    async () => (await clusterNodes(replica.address)).find((n) => n.id === replica.id)?.master === true,
    'the replica to be promoted',
  );
  for (const answer of await during) {
    if (answer.status !== 201) expect(answer).toEqual({ status: 503, code: 'service_unavailable' });
  }
  // The old master comes back and becomes the new master's replica, so WAIT 1 can succeed again.
  await restartNode(victim.address);
  await waitUntil(async () => {
    const seen = (await clusterNodes(replica.address)).find((n) => n.id === victim.id);
    return seen !== undefined && !seen.master && !seen.failed && seen.masterId === replica.id;
  }, 'the old master to rejoin as a replica');
  await waitUntil(replicasInSync, 'every replica in sync');
  // Until every node and the vault's slot map agree (a few hundred ms), a write may still meet the
  // old master's stale view; such writes are refused (503), never acknowledged.
  await waitUntil(async () => statuses(await tokenize(9, 3)).every((s) => s === 201), 'writes to be acknowledged again');

  const after = await tokenize(45, 3);
  expect(statuses(after)).toEqual(after.map(() => 201));

  // No acknowledged token was lost, through the slot move and the failover.
  expect(acknowledged.length).toBeGreaterThan(90);
  await expectReadBack(acknowledged);
});

it('with a master down and no replica to take over, only the cards whose slots it held fail', async () => {
  const nodes = await clusterNodes(observer);
  // The replica promoted in the previous test, with the old master now its replica.
  const master = nodes.find((n) => n.master && n.slots.length > 0 && !touched.includes(n.id))!;
  const replica = nodes.find((n) => !n.master && n.masterId === master.id)!;
  await processOf(replica.address).stop('SIGKILL');
  await processOf(master.address).stop('SIGKILL');
  await waitUntil(
    async () => (await clusterNodes(observer)).find((n) => n.id === master.id)?.failed === true,
    'the master to be marked failed',
  );
  const vaultLogFrom = stack.vault.output.length;
  const answers = await tokenize(60, 12);
  // Concurrent requests reached the vault as batches, mixing slots of live and dead masters ...
  expect(stack.vault.output.slice(vaultLogFrom)).toContain('"rpc":"TokenizeBatch"');
  // ... and a third of the keyspace is down, not all of it.
  const created = answers.filter((a) => a.status === 201).length;
  expect(created).toBeGreaterThan(20);
  expect(created).toBeLessThan(60);
  for (const answer of answers) {
    if (answer.status !== 201) expect(answer).toEqual({ status: 503, code: 'service_unavailable' });
  }
  // Every token answered 201 here is on a live master and reads back.
  await expectReadBack(acknowledged.slice(-created));
});
