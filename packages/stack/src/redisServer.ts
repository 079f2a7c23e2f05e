import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManagedProcess, ROOT, type ManagedProcessOptions } from './managedProcess';
import { tcpOpen, waitFor } from './wait';

/** The users of deploy/redis/users.acl: one per service that reads or writes Redis. */
export type RedisUser = 'vault' | 'gateway' | 'admin' | 'fields' | 'inbound';
const REDIS_USERS: readonly RedisUser[] = ['vault', 'gateway', 'admin', 'fields', 'inbound'];

export interface RedisAclOptions {
  /** Each user's password; Redis is given only their SHA-256 unless `plainPasswords`. */
  passwords: Record<RedisUser, string>;
  /** Give deploy/redis/start.sh the passwords themselves (it accepts either, as the recipes do). */
  plainPasswords?: boolean;
  /** More environment of start.sh, e.g. TESSERA_REDIS_TLS_DIR and TESSERA_REDIS_PORT: TLS only (no --port then). */
  scriptEnv?: NodeJS.ProcessEnv;
}

export interface RedisServerOptions {
  port: number;
  /** Append-only file with this fsync policy; undefined: no AOF (nothing survives a restart). */
  appendfsync?: 'always' | 'everysec';
  /** More redis-server arguments (e.g. `--enable-debug-command yes`). */
  args?: string[];
  /**
   * The directory of its data, kept when it stops (created, owner only, if missing), so that a
   * restart finds the AOF again. Default: a temporary directory of its own, removed on stop.
   */
  dir?: string;
  /** The addresses it binds (redis-server's `--bind`): loopback only by default. */
  bind?: string;
  /**
   * Run it as the recipes do, through deploy/redis/start.sh: the users of deploy/redis/users.acl
   * with these passwords, the default user off. `users` of the result are then their URLs.
   */
  acl?: RedisAclOptions;
  process?: ManagedProcessOptions;
}

export interface RedisServerProcess {
  /** Without `acl` no credentials; with `acl` the admin user's URL (as the keys and admin CLIs use it). */
  url: string;
  port: number;
  dir: string;
  /** With `acl`: one URL per service user, with its password. */
  users?: Record<RedisUser, string>;
  process: ManagedProcess;
  stop(): Promise<void>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What deploy/redis/start.sh reads: each user's password (or its digest) and where to write the ACL. */
function aclScriptEnv(acl: RedisAclOptions, dir: string): NodeJS.ProcessEnv {
  const passwords = REDIS_USERS.map((user) => {
    const password = acl.passwords[user];
    // start.sh refuses a user without one: say which, before a digest of `undefined` is attempted.
    if (typeof password !== 'string') throw new Error(`no Redis password for the ${user} user (acl.passwords.${user})`);
    const variable = `REDIS_${user.toUpperCase()}_PASSWORD`;
    return acl.plainPasswords ? [variable, password] : [`${variable}_SHA256`, sha256(password)];
  });
  return {
    PATH: process.env.PATH,
    ...Object.fromEntries(passwords),
    TESSERA_REDIS_RUN_DIR: path.join(dir, 'run'),
    ...acl.scriptEnv,
  };
}

/**
 * A private redis-server on a loopback port, with a directory of its own (AOF files and snapshots
 * never land in the repository unless `dir` says so). Never the machine's own Redis.
 */
export async function startRedisServer(options: RedisServerOptions): Promise<RedisServerProcess> {
  const { port, acl } = options;
  const keepDir = options.dir !== undefined;
  const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-redis-'));
  if (keepDir) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const aof = options.appendfsync === undefined ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', options.appendfsync];
  const tls = acl?.scriptEnv?.TESSERA_REDIS_TLS_DIR !== undefined;
  const args = [
    // With TLS, start.sh turns the plaintext port off and listens with TLS on TESSERA_REDIS_PORT.
    ...(tls ? [] : ['--port', String(port)]),
    '--bind',
    options.bind ?? '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    ...aof,
    ...(options.args ?? []),
  ];
  const proc = (
    acl === undefined
      ? new ManagedProcess('redis', 'redis-server', args, process.env, options.process)
      : new ManagedProcess(
          'redis',
          'sh',
          [path.join(ROOT, 'deploy', 'redis', 'start.sh'), ...args],
          aclScriptEnv(acl, dir),
          options.process,
        )
  ).start();
  try {
    await redisReady(proc, port);
  } catch (err) {
    await proc.stop();
    if (!keepDir) fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const base = tls ? `rediss://%s@localhost:${port}` : `redis://%s@127.0.0.1:${port}`;
  const users =
    acl &&
    (Object.fromEntries(
      REDIS_USERS.map((user) => [user, base.replace('%s', `tessera-${user}:${encodeURIComponent(acl.passwords[user])}`)]),
    ) as Record<RedisUser, string>);
  return {
    url: users?.admin ?? `redis://127.0.0.1:${port}`,
    port,
    dir,
    ...(users ? { users } : {}),
    process: proc,
    async stop(this: RedisServerProcess) {
      // this.process: a test may have restarted it (restartRedis).
      await this.process.stop();
      if (!keepDir) fs.rmSync(dir, { recursive: true, force: true });
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
