import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface RedisServerHandle {
  port: number;
  url: string;
  stop(): Promise<void>;
}

export type RedisServer = RedisServerHandle;

/** Test support shared by the services' unit tests and the integration harness. */

/**
 * Ports for the processes a test starts come from a block below the kernel's ephemeral range
 * (32768-60999 here), one block per Jest worker. An OS-chosen free port (listen on 0) is an
 * ephemeral port: between the probe closing it and the service binding it, any outgoing
 * connection of the machine may take it as its local port (EADDRINUSE, seen under load).
 * Redis Cluster buses (port + 10000) stay below the ephemeral range too.
 */
const PORT_BLOCK_SIZE = 1000;
const PORT_BLOCK_BASE = 12_000 + ((Number(process.env.JEST_WORKER_ID ?? '1') - 1) % 8) * PORT_BLOCK_SIZE;
let nextPortOffset = 0;

function bindsOn(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let tried = 0; tried < PORT_BLOCK_SIZE; tried++) {
    const port = PORT_BLOCK_BASE + (nextPortOffset++ % PORT_BLOCK_SIZE);
    if (await bindsOn(port, host)) return port;
  }
  throw new Error(`no free port in ${PORT_BLOCK_BASE}-${PORT_BLOCK_BASE + PORT_BLOCK_SIZE - 1}`);
}

function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`redis-server did not listen on ${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** A private, throw-away redis-server on a free loopback port: never the machine's Redis. */
export async function startRedisServer(extraArgs: string[] = []): Promise<RedisServerHandle> {
  const port = await freePort();
  // Its own directory: AOF files and replication snapshots must never land in the repository.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-unit-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...extraArgs],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(port, 5000);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A throw-away redis-server and a client of it (made by `connect`) for the describe block or file
 * this is called in: started before its tests, stopped after them. The fields are set once this
 * beforeAll has run.
 */
export function useRedisServer<C extends { disconnect(): void }>(
  connect: (url: string) => C | Promise<C>,
): { server: RedisServerHandle; client: C } {
  const handle = {} as { server: RedisServerHandle; client: C };
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
