import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManagedProcess, type ManagedProcessOptions } from './managedProcess';
import { tcpOpen, waitFor } from './wait';

export interface RedisServerOptions {
  port: number;
  /** Append-only file with this fsync policy; undefined: no AOF (nothing survives a restart). */
  appendfsync?: 'always' | 'everysec';
  /** More redis-server arguments (e.g. `--enable-debug-command yes`). */
  args?: string[];
  process?: ManagedProcessOptions;
}

export interface RedisServerProcess {
  url: string;
  port: number;
  dir: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/**
 * A private redis-server on a loopback port, with a temporary directory of its own (AOF files and
 * snapshots never land in the repository), removed on stop. Never the machine's own Redis.
 */
export async function startRedisServer(options: RedisServerOptions): Promise<RedisServerProcess> {
  const { port } = options;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-redis-'));
  const aof = options.appendfsync === undefined ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', options.appendfsync];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...aof, ...(options.args ?? [])];
  const proc = new ManagedProcess('redis', 'redis-server', args, process.env, options.process).start();
  await redisReady(proc, port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    process: proc,
    async stop(this: RedisServerProcess) {
      // this.process: a test may have restarted it (restartRedis).
      await this.process.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Ready means the data set is loaded: Redis accepts connections while it still reads its AOF, so
 * the log line is awaited when the output is at hand, the port otherwise.
 */
export async function redisReady(proc: ManagedProcess, port: number): Promise<void> {
  if (proc.capturesOutput) return proc.waitForOutput('Ready to accept connections');
  await waitFor(
    async () => {
      if (!proc.running) throw new Error(`redis-server exited early (${proc.options.logFile ?? 'see its output'})`);
      return tcpOpen(port);
    },
    'redis-server',
    20_000,
  );
}
