import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ManagedProcessOptions } from './managedProcess';
import { startRedisServer, type RedisServerProcess, type RedisUser } from './redisServer';

export interface LocalRedisOptions {
  /** Its data directory (`.tessera/redis`): the AOF, kept across restarts. */
  dir: string;
  /** Each service user's password (deploy/redis/users.acl). */
  passwords: Record<RedisUser, string>;
  /** The port it had last time: taken again when it is free, so the address stays the same. */
  port?: number;
  process?: ManagedProcessOptions;
}

const PID_FILE = 'redis.pid';

/** The pid of a redis-server still running on `dir` (its pid file names a live redis-server), if any. */
export function redisServerOf(dir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, PID_FILE), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    // A stale file (the process was killed) may name a pid reused by something else.
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('redis-server') ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** `port` when nothing listens on it on loopback, else one the system picks. */
function freePortPreferring(port: number | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (port !== undefined && err.code === 'EADDRINUSE') resolve(freePortPreferring(undefined));
      else reject(err);
    });
    server.listen(port ?? 0, '127.0.0.1', () => {
      const chosen = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(chosen));
    });
  });
}

/**
 * The private redis-server of `npm start`: append-only file (fsync every second) in `dir`, loopback
 * only, the users of deploy/redis/users.acl with their own passwords and the default user off, as
 * in production. Two servers on one AOF would corrupt it: refused while another runs on `dir`.
 */
export async function startLocalRedis(options: LocalRedisOptions): Promise<RedisServerProcess & { users: Record<RedisUser, string> }> {
  const running = redisServerOf(options.dir);
  if (running !== undefined) {
    throw new Error(
      `a redis-server (pid ${running}) is still using ${options.dir}: another npm start runs, or one was killed ` +
        `before it could stop it. Stop that one (or kill ${running}) and start again.`,
    );
  }
  const server = await startRedisServer({
    port: await freePortPreferring(options.port),
    dir: options.dir,
    appendfsync: 'everysec',
    args: ['--pidfile', path.join(options.dir, PID_FILE)],
    acl: { passwords: options.passwords },
    process: options.process,
  });
  return server as RedisServerProcess & { users: Record<RedisUser, string> };
}
