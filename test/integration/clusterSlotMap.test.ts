/**
 * A server-profile Cluster client (auto-pipelining on) after a replica took over a master: the
 * commands it sends in one tick to the old master share one pipeline, and Redis answers each with
 * a MOVED of its own slot. ioredis follows a pipeline's MOVED only when every reply is the same
 * error, so these reach the caller, and it does not re-read the slot map either: without a refresh
 * every later request went to the old master and failed again (seen as a gateway answering 503 to
 * every API call, the API key lookup failing with MOVED, for good after a failover in CI).
 */
import { Cluster } from 'ioredis';
import { AcknowledgedWriter, createRedisClient, type RedisClient } from '@tessera/common/redis';
import { createLogger } from '@tessera/common';
import { clusterNodes, clusterStateOk, replicasInSync, startRedisCluster, waitUntil, withNode, type RedisCluster } from './harness';

jest.setTimeout(120_000);

let cluster: RedisCluster;
let client: RedisClient;

beforeAll(async () => {
  cluster = await startRedisCluster({ replicas: 1 });
  client = createRedisClient(undefined, { profile: 'server', commandTimeoutMs: 2000, clusterNodes: cluster.nodes });
  await client.connect();
});

afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

/** Two keys of different slots that `master` serves. */
async function twoKeysServedBy(master: string): Promise<[string, string]> {
  const slots = new Set((await clusterNodes(master)).find((n) => n.address === master)!.slots);
  const keys: string[] = [];
  const seen = new Set<number>();
  for (let i = 0; keys.length < 2; i++) {
    const slot = await withNode(master, async (node) => (await node.call('CLUSTER', 'KEYSLOT', `key:${i}`)) as number);
    if (slots.has(slot) && !seen.has(slot)) {
      seen.add(slot);
      keys.push(`key:${i}`);
    }
  }
  return keys as [string, string];
}

/** A graceful failover of `master` to its replica; resolves with the replica once the cluster is ok. */
async function failOver(master: string): Promise<string> {
  const nodes = await clusterNodes(master);
  const masterId = nodes.find((n) => n.address === master)!.id;
  const replica = nodes.find((n) => !n.master && n.masterId === masterId)!.address;
  await withNode(replica, (node) => node.call('CLUSTER', 'FAILOVER'));
  await waitUntil(async () => (await clusterNodes(master)).find((n) => n.address === replica)?.master === true, 'the replica to take over');
  await waitUntil(() => clusterStateOk(master), 'every node to report cluster_state:ok');
  // So that WAIT 1 can be satisfied: what is left to fail is the client's view of the cluster.
  await waitUntil(() => replicasInSync(master), 'every replica in sync');
  return replica;
}

/** Runs `send` until it resolves, as a client retries a 503, 20 times at most; its last outcome. */
async function retried<T>(send: () => Promise<T>): Promise<PromiseSettledResult<T>> {
  let outcome: PromiseSettledResult<T> | undefined;
  for (let attempt = 0; attempt < 20 && outcome?.status !== 'fulfilled'; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    [outcome] = await Promise.allSettled([send()]);
  }
  return outcome!;
}

it('re-reads the slot map when Redis answers MOVED, so requests after a failover are served again', async () => {
  const master = cluster.nodes[0]!;
  const keys = await twoKeysServedBy(master);
  // Both in one tick: auto-pipelining sends them to one node in one pipeline, as a request's commands go.
  const readBoth = () => Promise.all(keys.map((key) => client.incr(key)));
  await readBoth();

  const replica = await failOver(master);

  // The first requests may still meet the old map; a client retrying them is served once it is re-read.
  expect(await retried(readBoth)).toEqual({ status: 'fulfilled', value: [2, 2] });
  const slot = (await withNode(replica, (node) => node.call('CLUSTER', 'KEYSLOT', keys[0]))) as number;
  expect(client instanceof Cluster && client.slots[slot]?.[0]).toBe(replica);
});

it('acknowledged writes (replica:1) of a failed-over master succeed again once retried, the WAIT included', async () => {
  const writer = new AcknowledgedWriter(
    client,
    { kind: 'replicas', replicas: 1, timeoutMs: 1000 },
    createLogger('test'),
    'VAULT_WRITE_ACK',
  );
  const master = cluster.nodes[1]!;
  const [key] = await twoKeysServedBy(master);
  expect(await writer.write([['set', key, 'before']])).toEqual(['OK']);

  await failOver(master);
  // The old master is now a replica: it answers the SET with MOVED and the WAIT with an error of its own.
  expect(await retried(() => writer.write([['set', key, 'after']]))).toEqual({ status: 'fulfilled', value: ['OK'] });
});
