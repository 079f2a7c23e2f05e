import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateDevCertificates } from '@tessera/protos';
import {
  ManagedProcess,
  PortBlock,
  redisReady,
  startRedisServer as launchRedisServer,
  waitFor,
  type RedisServerProcess,
} from '@tessera/stack';

/**
 * Ports for the processes a test starts: one block below the ephemeral range per Jest worker
 * (see PortBlock), so parallel workers never hand out the same port. Redis Cluster buses
 * (port + 10000) stay below the ephemeral range too.
 */
const ports = new PortBlock(12_000 + ((Number(process.env.JEST_WORKER_ID ?? '1') - 1) % 8) * 1000);

export function freePort(host = '127.0.0.1'): Promise<number> {
  return ports.freePort(host);
}

export interface RedisServerHandle {
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** A private, throw-away redis-server (no AOF) on a free loopback port: never the machine's Redis. */
export async function startRedisServer(extraArgs: string[] = []): Promise<RedisServer> {
  return launchRedisServer({ port: await freePort(), args: extraArgs });
}

/**
 * A throw-away redis-server and a client of it (made by `connect`) for the describe block or file
 * this is called in: started before its tests, stopped after them. The fields are set once this
 * beforeAll has run.
 */
export function useRedisServer<C extends { disconnect(): void }>(
  connect: (url: string) => C | Promise<C>,
): { server: RedisServer; client: C } {
  const handle = {} as { server: RedisServer; client: C };
  beforeAll(async () => {
    handle.server = await startRedisServer();
    handle.client = await connect(handle.server.url);
  });
  afterAll(async () => {
    handle.client?.disconnect();
    await handle.server?.stop();
  });
  return handle;
}

/** `url`: without `acl` no credentials; with `acl` the admin user's URL (as the keys and admin CLIs use it). */
export interface RedisServer extends RedisServerProcess {
  /** With `tls`: the CA file a service gives as REDIS_TLS_CA_FILE. */
  tlsCaFile?: string;
}

export interface RedisStartOptions {
  /** Run deploy/redis/start.sh as the recipes do: the shipped ACL file, random passwords, default user off. */
  acl?: boolean;
  /** With `acl`: TLS only (rediss://), server certificate for DNS:localhost from a test CA. */
  tls?: boolean;
  /** With `acl`: start.sh gets only the passwords' SHA-256, as deploy/k8s and docker-compose.yml give it. */
  digestsOnly?: boolean;
  /** More redis-server arguments (e.g. `--enable-debug-command yes`). */
  args?: string[];
}

/**
 * The integration tests' Redis: a private redis-server on a free loopback port with AOF and fsync
 * always (every test checks the durable write path); never the machine's own Redis.
 */
export async function startRedis(options: RedisStartOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  if (!options.acl) return launchRedisServer({ port, appendfsync: 'always', args: options.args });
  const password = () => randomBytes(24).toString('hex');
  const passwords = { vault: password(), gateway: password(), admin: password(), fields: password(), inbound: password() };
  let tls: { dir: string; caFile: string } | undefined;
  if (options.tls) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-redis-certs-'));
    generateDevCertificates(dir, ['localhost']);
    tls = { dir, caFile: path.join(dir, 'ca.crt') };
  }
  const server = await launchRedisServer({
    port,
    appendfsync: 'always',
    args: options.args,
    // localhost may resolve to ::1 first: listen on both loopbacks ("-": if the host has IPv6).
    bind: '127.0.0.1 -::1',
    acl: {
      passwords,
      // digestsOnly: start.sh gets only the SHA-256, as deploy/k8s and docker-compose.yml give it.
      plainPasswords: !options.digestsOnly,
      scriptEnv: tls && { TESSERA_REDIS_TLS_DIR: path.join(tls.dir, 'localhost'), TESSERA_REDIS_PORT: String(port) },
    },
  });
  if (tls === undefined) return server;
  const certDir = tls.dir;
  return {
    ...server,
    tlsCaFile: tls.caFile,
    async stop(this: RedisServer) {
      await server.stop.call(this);
      fs.rmSync(certDir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts redis-server again on the same port and directory after `redis.process.stop(...)`, as
 * an operator restarting it would: the data comes back from the AOF.
 */
export async function restartRedis(redis: RedisServer): Promise<void> {
  if (redis.process.running) throw new Error('restartRedis: stop the redis process first');
  const old = redis.process;
  const proc = new ManagedProcess('redis', old.command, old.args, old.env).start();
  redis.process = proc;
  await redisReady(proc, redis.port);
}

export interface RedisCluster extends RedisServer {
  /** host:port of every master, for REDIS_CLUSTER_NODES. */
  nodes: string[];
  processes: ManagedProcess[];
}

export interface RedisClusterOptions {
  /** Replicas per master (default 0); with 1, `nodes` lists 3 masters and then their 3 replicas. */
  replicas?: number;
  /** cluster-node-timeout (default 2000): how long until a silent master is failed over. */
  nodeTimeoutMs?: number;
  /** More redis-server arguments for every node (e.g. `--cluster-require-full-coverage no`). */
  args?: string[];
}

/**
 * A real Redis Cluster of three masters (by default no replicas) on free loopback ports, each with
 * its own directory, AOF with fsync always, and an explicit cluster-bus port. `url`/`port` name
 * the first node, so a Stack started on it gets REDIS_URL too (credentials source; any node works).
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const processes: ManagedProcess[] = [];
  const dirs: string[] = [];
  const nodes: string[] = [];
  const replicas = options.replicas ?? 0;
  for (let i = 0; i < 3 * (1 + replicas); i++) {
    const [port, busPort] = [await freePort(), await freePort()];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-cluster-'));
    dirs.push(dir);
    nodes.push(`127.0.0.1:${port}`);
    // Start all three before waiting, in parallel.
    processes.push(
      new ManagedProcess(
        `redis-cluster-${i}`,
        'redis-server',
        [
          '--port',
          String(port),
          '--cluster-port',
          String(busPort),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          String(options.nodeTimeoutMs ?? 2000),
          '--save',
          '',
          '--appendonly',
          'yes',
          '--appendfsync',
          'always',
          // A replica's first sync starts at once instead of after Redis's 5 s wait for more replicas.
          '--repl-diskless-sync-delay',
          '0',
          ...(options.args ?? []),
        ],
        process.env,
      ).start(),
    );
  }
  await Promise.all(processes.map((p) => p.waitForOutput('Ready to accept connections')));
  const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', String(replicas), '--cluster-yes'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stderr}${created.stdout}`);
  // Every node must agree the cluster is up before clients connect.
  await waitFor(
    () =>
      nodes.every((node) => {
        const [host, port] = node.split(':') as [string, string];
        const info = spawnSync('redis-cli', ['-h', host, '-p', port, 'cluster', 'info'], { encoding: 'utf8', timeout: 5_000 });
        return /cluster_state:ok/.test(info.stdout);
      }),
    'redis cluster state ok',
    30_000,
  );
  // The cluster is ok before any replica has its master's data. A replica that never synced is
  // never promoted (its data counts as too old), so a master killed before then stays dead and its
  // slots unanswered for good: a failover test must start only once every replica is in sync.
  if (replicas > 0) await waitFor(() => everyReplicaInSync(nodes, 3 * replicas), 'every replica in sync', 30_000);
  const first = processes[0] as ManagedProcess;
  return {
    url: `redis://${nodes[0]}`,
    port: Number(nodes[0]?.split(':')[1]),
    dir: dirs[0] as string,
    process: first,
    nodes,
    processes,
    async stop() {
      await Promise.all(processes.map((p) => p.stop()));
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `count` replicas have a replication link that is up (their first sync is done), and every node
 * knows all of them as replicas (the masters that vote in a failover need to).
 */
function everyReplicaInSync(nodes: readonly string[], count: number): boolean {
  const ask = (node: string, ...command: string[]): string => {
    const [host, port] = node.split(':') as [string, string];
    return spawnSync('redis-cli', ['-h', host, '-p', port, ...command], { encoding: 'utf8', timeout: 5_000 }).stdout ?? '';
  };
  const synced = nodes.filter((node) => /^master_link_status:up/m.test(ask(node, 'info', 'replication'))).length;
  const known = (node: string) =>
    ask(node, 'cluster', 'nodes')
      .split('\n')
      .filter((line) => / (myself,)?slave /.test(line)).length;
  return synced === count && nodes.every((node) => known(node) === count);
}
