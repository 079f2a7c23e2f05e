/**
 * Looking at and changing a running Redis Cluster (startRedisCluster) from a test: who is master
 * of what as a node sees it, restarting a node that was killed, and waiting for the cluster to
 * settle after a fault.
 */
import { Redis } from 'ioredis';
import { ManagedProcess } from '@tessera/stack';
import type { RedisCluster } from './redisServer';

export interface ClusterNode {
  id: string;
  address: string;
  master: boolean;
  masterId: string;
  failed: boolean;
  slots: number[];
}

/** A plain client of one node (no cluster redirections, no retries); call connect() first. */
export function connectNode(address: string): Redis {
  const [host, port] = address.split(':') as [string, string];
  return new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
}

/** Runs `use` with a connected client of one node, then disconnects it. */
export async function withNode<T>(address: string, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = connectNode(address);
  await client.connect();
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** CLUSTER NODES as one live node sees it. */
export async function clusterNodes(via: string): Promise<ClusterNode[]> {
  const text = await withNode(via, (client) => client.call('CLUSTER', 'NODES') as Promise<string>);
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, addr, flags, masterId, , , , , ...ranges] = line.split(' ') as string[];
      const slots: number[] = [];
      for (const range of ranges) {
        if (range.startsWith('[')) continue; // a slot being migrated
        const [from, to] = range.split('-').map(Number) as [number, number | undefined];
        for (let s = from; s <= (to ?? from); s++) slots.push(s);
      }
      return {
        id: id ?? '',
        address: (addr ?? '').split('@')[0] ?? '',
        master: (flags ?? '').includes('master'),
        masterId: masterId ?? '-',
        failed: /fail/.test(flags ?? ''),
        slots,
      };
    });
}

/** The redis-server process of one node of the cluster. */
export function nodeProcess(cluster: RedisCluster, address: string): ManagedProcess {
  const proc = cluster.processes[cluster.nodes.indexOf(address)];
  if (proc === undefined) throw new Error(`no process for ${address}`);
  return proc;
}

/** Starts a stopped node again on its port and directory; it rejoins with its nodes.conf. */
export async function restartClusterNode(cluster: RedisCluster, address: string): Promise<void> {
  const old = nodeProcess(cluster, address);
  const proc = new ManagedProcess(old.name, 'redis-server', old.args, old.env).start();
  cluster.processes[cluster.nodes.indexOf(address)] = proc; // cluster.stop() stops what is in this array
  await proc.waitForOutput('Ready to accept connections');
}

/** Polls `check` (a rejection counts as not yet) every 200 ms until it holds. */
export async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Every live master has a replica that finished its sync (connected_slaves also counts one still
 * waiting for its first copy) and every replica's link is up, so WAIT 1 can be satisfied everywhere.
 */
export async function replicasInSync(via: string): Promise<boolean> {
  const nodes = (await clusterNodes(via)).filter((n) => !n.failed);
  for (const node of nodes) {
    const info = await withNode(node.address, (client) => client.info('replication'));
    if (node.master && node.slots.length > 0 && !/^slave\d+:.*state=online/m.test(info)) return false;
    if (!node.master && !/^master_link_status:up/m.test(info)) return false;
  }
  return true;
}

/** Every live node serves queries (a node between two cluster states answers CLUSTERDOWN). */
export async function clusterStateOk(via: string): Promise<boolean> {
  const nodes = (await clusterNodes(via)).filter((n) => !n.failed);
  const states = await Promise.all(
    nodes.map((node) => withNode(node.address, (client) => client.call('CLUSTER', 'INFO') as Promise<string>)),
  );
  return states.every((info) => info.includes('cluster_state:ok'));
}
