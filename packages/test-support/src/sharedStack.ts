/**
 * One stack per Jest worker, shared by the integration test files that need no configuration of
 * their own: starting redis-server, vault, proxy and gateway costs each file seconds it would
 * otherwise spend waiting. The first file a worker runs starts the stack and leaves its addresses
 * and environment in a JSON file; the worker's later files attach to it. Jest gives every file a
 * fresh module registry, so the stack cannot live in a module: its processes write to log files,
 * are not tied to the worker's event loop, and the integration project's globalTeardown
 * (sharedStacksTeardown.ts) stops them once every file has run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startRedisServer as launchRedisServer } from '@tessera/stack';
import { isRunning } from './processRunning';
import { PspRecorder } from './psp';
import { freePort, type RedisServer } from './redisServer';
import { Stack, startStack, useStack, type StackFixture } from './stack';

/** Set by the integration project's globalSetup (sharedStacksSetup.ts): where the stacks' state and logs live. */
export const SHARED_STACKS_DIR_ENV = 'TESSERA_SHARED_STACKS_DIR';

/** What a file needs to attach to its worker's stack, and what the teardown needs to stop it. */
export interface SharedStackState {
  redis: { url: string; port: number; dir: string };
  /** The admin and fields services' too: `stack.adminUrl` and `stack.fieldsUrl` of every file on the shared stack. */
  ports: { vault: number[]; proxy: number[]; gateway: number; admin?: number; fields?: number };
  env: NodeJS.ProcessEnv;
  logFiles: string[];
  pids: number[];
  /** Removed by the teardown with the stack (TESSERA_STATE_DIR). */
  dirs: string[];
}

export interface SharedStackFixture extends StackFixture {
  /**
   * A merchant id of this file's own (`acme` → `acme-qbxkzt`): files share the stack's Redis, so
   * what one file's merchants write (tokens, keys, request log, audit) is never another file's.
   */
  merchant(name: string): string;
}

function stateFileOf(dir: string): string {
  return path.join(dir, `worker-${process.env.JEST_WORKER_ID ?? '1'}.json`);
}

async function startSharedStack(dir: string): Promise<SharedStackState> {
  const workerDir = fs.mkdtempSync(path.join(dir, `worker-${process.env.JEST_WORKER_ID ?? '1'}-`));
  const logDir = path.join(workerDir, 'logs');
  // As startRedis: AOF with fsync always, every test checks the durable write path.
  const redis: RedisServer = await launchRedisServer({
    port: await freePort(),
    appendfsync: 'always',
    dir: path.join(workerDir, 'redis'),
    process: { logFile: path.join(logDir, 'redis.log') },
  });
  let stack: Stack;
  try {
    stack = await startStack(redis, { logDir });
  } catch (err) {
    await redis.stop();
    throw err;
  }
  const processes = [redis.process, ...stack.processes];
  for (const proc of processes) proc.unref();
  const state: SharedStackState = {
    redis: { url: redis.url, port: redis.port, dir: redis.dir },
    ports: stack.ports,
    env: stack.env,
    logFiles: processes.map((proc) => proc.options.logFile as string),
    pids: processes.map((proc) => proc.pid as number),
    dirs: [stack.env.TESSERA_STATE_DIR as string],
  };
  fs.writeFileSync(stateFileOf(dir), JSON.stringify(state), { mode: 0o600 });
  return state;
}

/** The worker's stack: the one a former file started if it still runs, else a new one. */
async function sharedStackState(dir: string): Promise<SharedStackState> {
  const file = stateFileOf(dir);
  if (fs.existsSync(file)) {
    const state = JSON.parse(fs.readFileSync(file, 'utf8')) as SharedStackState;
    if (state.pids.every(isRunning)) return state;
    // A process of it died (a crashed service): none of this file's tests should see that.
    for (const pid of state.pids.filter(isRunning)) process.kill(pid, 'SIGKILL');
  }
  return startSharedStack(dir);
}

/**
 * A file's view of its worker's stack: the CLIs and the API on the shared processes, `logs()` only
 * what they wrote since the file attached (plus any process the file started itself, such as a
 * gateway replica); `stop()` stops only those.
 */
class SharedStack extends Stack {
  private readonly logOffsets: Array<[file: string, offset: number]>;

  constructor(state: SharedStackState) {
    const redis: RedisServer = {
      ...state.redis,
      get process(): never {
        throw new Error('the shared stack’s redis-server is not a test’s to stop: use useStack()');
      },
      stop: async () => undefined,
    };
    super(redis, state.ports, {});
    Object.assign(this.env, state.env);
    this.logOffsets = state.logFiles.map((file) => [file, fs.statSync(file).size]);
  }

  override logs(): string {
    const shared = this.logOffsets.map(([file, offset]) => fs.readFileSync(file).subarray(offset).toString('utf8'));
    return [...shared, super.logs()].join('\n');
  }
}

/**
 * Like useStack() with default options (and, with `psp`, a recording PSP of the file's own), on
 * the worker's shared stack. For files that never stop, restart or reconfigure a process of the
 * stack, and whose merchants are their own (`merchant()`). Without the integration project's
 * globalSetup (another runner) the file gets a stack of its own.
 */
export function useSharedStack(options: { psp?: boolean } = {}): SharedStackFixture {
  // Letters only: digits of an id next to a time or a count on a page could read as a card number to a scan for them.
  const suffix = Array.from(randomBytes(6), (byte) => String.fromCharCode(97 + (byte % 26))).join('');
  const merchant = (name: string) => `${name}-${suffix}`;
  const dir = process.env[SHARED_STACKS_DIR_ENV];
  if (dir === undefined) return Object.assign(useStack(options), { merchant });
  const fixture = { merchant } as SharedStackFixture;
  beforeAll(async () => {
    fixture.stack = new SharedStack(await sharedStackState(dir));
    fixture.redis = fixture.stack.redis;
    if (options.psp) fixture.psp = await new PspRecorder().start();
  });
  afterAll(async () => {
    await fixture.psp?.stop();
    await fixture.stack?.stop();
  });
  return fixture;
}
