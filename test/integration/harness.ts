/**
 * One harness for every integration test: real redis-server, real vault/proxy/gateway processes
 * (the compiled dist/ entry points, as in production), and a recording HTTP server as the PSP.
 * Every process's output is captured so tests can prove that no card data reaches a log.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { devTlsFiles, generateDevCertificates } from '@tessera/protos';
import { freePort } from '../support/redisServer';

export const ROOT = path.resolve(__dirname, '../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'logs');

export { freePort };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A process whose output is kept in memory and in test-artifacts/logs for a human to read. */
export class ManagedProcess {
  output = '';
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly command: string,
    readonly args: string[],
    readonly env: NodeJS.ProcessEnv,
  ) {}

  start(): this {
    const child = spawn(this.command, this.args, { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const append = (chunk: Buffer) => {
      this.output += chunk.toString('utf8');
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    return this;
  }

  /** The OS process id, e.g. to read /proc/<pid>/status; undefined before start(). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async waitForOutput(text: string, timeoutMs = 15_000): Promise<void> {
    const from = this.output.length;
    try {
      await waitFor(
        () => {
          if (!this.running) throw new Error(`${this.name} exited early:\n${this.output}`);
          return this.output.includes(text, Math.max(0, from - text.length));
        },
        `${this.name} to print "${text}"`,
        timeoutMs,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- ${this.name} output ---\n${this.output.slice(-4000)}`);
    }
  }

  /** Sends a signal and returns at once (SIGSTOP/SIGCONT to pause a process, SIGTERM to watch a drain). */
  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child?.kill(signal);
  }

  /** Resolves when the process has exited, with its exit code (null when a signal ended it). */
  async exit(): Promise<number | null> {
    await this.exited;
    return this.child?.exitCode ?? null;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.running) return;
    this.child?.kill(signal);
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

export interface RedisServer {
  /** Without `acl`: no credentials. With `acl`: the gateway's URL (as the keys CLI uses it). */
  url: string;
  port: number;
  dir: string;
  process: ManagedProcess;
  /** With `acl`: one URL per service user of deploy/redis/users.acl, with its password. */
  users?: { vault: string; gateway: string };
  /** With `tls`: the CA file a service gives as REDIS_TLS_CA_FILE. */
  tlsCaFile?: string;
  stop(): Promise<void>;
}

export interface RedisStartOptions {
  /** Run deploy/redis/start.sh as the recipes do: the shipped ACL file, random passwords, default user off. */
  acl?: boolean;
  /** With `acl`: TLS only (rediss://), server certificate for DNS:localhost from a test CA. */
  tls?: boolean;
  /** More redis-server arguments (e.g. `--enable-debug-command yes`). */
  args?: string[];
}

/** A private redis-server on a free loopback port; never the machine's own Redis. */
export async function startRedis(options: RedisStartOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-redis-'));
  const serverArgs = ['--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', ...(options.args ?? [])];
  let proc: ManagedProcess;
  let users: RedisServer['users'];
  let tlsCaFile: string | undefined;
  let url = `redis://127.0.0.1:${port}`;
  if (options.acl) {
    const passwords = { vault: randomBytes(24).toString('hex'), gateway: randomBytes(24).toString('hex') };
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      REDIS_VAULT_PASSWORD: passwords.vault,
      REDIS_GATEWAY_PASSWORD: passwords.gateway,
      TESSERA_REDIS_RUN_DIR: path.join(dir, 'run'),
    };
    // localhost may resolve to ::1 first: listen on both loopbacks ("-": if the host has IPv6).
    const bind = ['--bind', '127.0.0.1 -::1'];
    if (options.tls) {
      const certDir = path.join(dir, 'certs');
      generateDevCertificates(certDir, ['localhost']);
      env.TESSERA_REDIS_TLS_DIR = path.join(certDir, 'localhost');
      env.TESSERA_REDIS_PORT = String(port);
      tlsCaFile = path.join(certDir, 'ca.crt');
    }
    const args = [path.join(ROOT, 'deploy', 'redis', 'start.sh'), ...(options.tls ? [] : ['--port', String(port)]), ...bind, ...serverArgs];
    proc = new ManagedProcess('redis', 'sh', args, env).start();
    const base = options.tls ? `rediss://%s@localhost:${port}` : `redis://%s@127.0.0.1:${port}`;
    users = {
      vault: base.replace('%s', `tessera-vault:${passwords.vault}`),
      gateway: base.replace('%s', `tessera-gateway:${passwords.gateway}`),
    };
    url = users.gateway;
  } else {
    proc = new ManagedProcess('redis', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...serverArgs], process.env).start();
  }
  await proc.waitForOutput('Ready to accept connections');
  return {
    url,
    port,
    dir,
    process: proc,
    ...(users ? { users } : {}),
    ...(tlsCaFile ? { tlsCaFile } : {}),
    async stop(this: RedisServer) {
      // this.process: restartRedis may have replaced the process.
      await this.process.stop();
      fs.rmSync(dir, { recursive: true, force: true });
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
  await proc.waitForOutput('Ready to accept connections');
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

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type RecorderReply = (req: RecordedRequest, res: http.ServerResponse) => void;

/** A stand-in PSP that records exactly what it received and how many connections it saw. */
export class PspRecorder {
  requests: RecordedRequest[] = [];
  connections = 0;
  static readonly okReply: RecorderReply = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  };
  reply: RecorderReply = PspRecorder.okReply;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      this.requests.push(recorded);
      this.reply(recorded, res);
    });
  });
  port = 0;

  constructor(readonly host = '127.0.0.1') {
    this.server.on('connection', (socket) => {
      this.connections++;
      socket.on('error', () => undefined);
    });
  }

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, this.host, () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  reset(): void {
    this.reply = PspRecorder.okReply;
    this.requests = [];
    this.connections = 0;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** packages/sandbox-psp as its own process on a free port, once it listens; the caller stops `sandbox`. */
export async function startSandboxPsp(): Promise<{ sandbox: ManagedProcess; chargesUrl: string }> {
  const port = await freePort();
  const sandbox = new ManagedProcess('sandbox', process.execPath, [path.join(ROOT, 'packages/sandbox-psp/dist/main.js')], {
    PATH: process.env.PATH,
    SANDBOX_PSP_PORT: String(port),
  }).start();
  await sandbox.waitForOutput('sandbox psp listening');
  return { sandbox, chargesUrl: `http://127.0.0.1:${port}/v1/charges` };
}

export interface ApiKey {
  apiKey: string;
  id: string;
  merchantId: string;
  mode: 'test' | 'live';
}

export interface StackOptions {
  /** Extra environment for every service (e.g. CVV_TTL_SECONDS, PSP_TIMEOUT_MS). */
  env?: Record<string, string>;
  /** Extra environment for one service only, over `env` (e.g. the vault on a Redis of its own). */
  serviceEnv?: Partial<Record<'vault' | 'proxy' | 'gateway', Record<string, string>>>;
  /** Mutual TLS between the services with certificates made by generateDevCertificates (npm run certs). */
  tls?: boolean;
  /**
   * Vault and proxy processes, each on its own port (1 by default). With more than one, the
   * gateway and the proxies dial them as one static target (`ipv4:127.0.0.1:a,127.0.0.1:b`).
   */
  vaultReplicas?: number;
  proxyReplicas?: number;
}

/** One gRPC target naming every replica's port, as the services' VAULT_ADDR / PROXY_ADDR take it. */
export function grpcTargetOf(ports: readonly number[]): string {
  const addresses = ports.map((port) => `127.0.0.1:${port}`);
  return addresses.length === 1 ? (addresses[0] as string) : `ipv4:${addresses.join(',')}`;
}

export class Stack {
  readonly processes: ManagedProcess[] = [];
  /** The first vault and proxy replica; `vaults` / `proxies` hold all of them, in port order. */
  vault!: ManagedProcess;
  proxy!: ManagedProcess;
  readonly vaults: ManagedProcess[] = [];
  readonly proxies: ManagedProcess[] = [];
  gateway!: ManagedProcess;
  baseUrl = '';
  readonly env: NodeJS.ProcessEnv;
  private readonly name = `stack-${process.pid}-${randomBytes(3).toString('hex')}`;

  private readonly serviceEnv: NonNullable<StackOptions['serviceEnv']>;

  constructor(
    readonly redis: RedisServer,
    readonly ports: { vault: number[]; proxy: number[]; gateway: number },
    options: StackOptions,
  ) {
    this.serviceEnv = options.serviceEnv ?? {};
    this.baseUrl = `http://127.0.0.1:${ports.gateway}`;
    this.env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      LOG_LEVEL: 'debug',
      REDIS_URL: redis.url,
      ...(redis.tlsCaFile ? { REDIS_TLS_CA_FILE: redis.tlsCaFile } : {}),
      // What clients dial; each vault and proxy process binds its own port (see replica()).
      VAULT_ADDR: grpcTargetOf(ports.vault),
      PROXY_ADDR: grpcTargetOf(ports.proxy),
      PORT: String(ports.gateway),
      HOST: '127.0.0.1',
      VAULT_KEYS: `test1:${randomBytes(32).toString('base64')}`,
      API_KEY_PEPPER: randomBytes(32).toString('hex'),
      PSP_ALLOWED_CIDRS: '127.0.0.1/32',
      // PSP recorders listen on ephemeral ports, opened as a range; ports below 1024 (SSH, SMTP,
      // ...) stay refused, and the proxy's unit tests cover the port rule itself.
      PSP_ALLOWED_PORTS: '1024-65535',
      // Every test client is 127.0.0.1 and tests fail authentication on purpose: limits high
      // enough never to trip by accident, still enforced (rateLimits.test.ts sets low ones).
      RATE_LIMIT_PER_KEY_PER_SECOND: '100000',
      RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: '100000',
      // Likewise the card-testing limits on browser tokenization (browserCardTesting.test.ts sets low ones).
      BROWSER_TOKENS_PER_KEY_PER_MINUTE: '100000',
      BROWSER_TOKENS_PER_IP_PER_MINUTE: '100000',
      BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: '100000',
      // startRedis runs appendfsync always: every integration test checks the durable write path.
      VAULT_WRITE_ACK: 'aof',
      TESSERA_STATE_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-state-')),
      ...options.env,
    };
    if (options.tls) {
      this.certDir = path.join(this.env.TESSERA_STATE_DIR as string, 'certs');
      generateDevCertificates(this.certDir, ['gateway', 'vault', 'proxy']);
    }
  }

  /** Set when the stack runs with mTLS: each service's own files live in <certDir>/<service>/ (devTlsFiles). */
  readonly certDir: string | undefined;

  private service(name: 'vault' | 'proxy' | 'gateway', env: NodeJS.ProcessEnv = {}): ManagedProcess {
    // Each service gets its own certificate; the shared env (used by the CLIs too) has none.
    const tlsEnv: NodeJS.ProcessEnv =
      this.certDir === undefined
        ? {}
        : (({ caFile, certFile, keyFile }) => ({ TLS_CA_FILE: caFile, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile }))(
            devTlsFiles(this.certDir, name),
          );
    // With Redis ACL users the vault logs in as its own user; the gateway (and its CLIs) use the
    // shared env's URL, which is the gateway user's; the proxy gets no Redis at all.
    const redisEnv: NodeJS.ProcessEnv =
      this.redis.users === undefined
        ? {}
        : name === 'vault'
          ? { REDIS_URL: this.redis.users.vault }
          : name === 'proxy'
            ? { REDIS_URL: undefined }
            : {};
    const proc = new ManagedProcess(name, process.execPath, [path.join(ROOT, 'services', name, 'dist', 'main.js')], {
      ...this.env,
      ...tlsEnv,
      ...redisEnv,
      ...this.serviceEnv[name],
      ...env,
    });
    this.processes.push(proc);
    return proc;
  }

  /** Vault or proxy replica `index`, bound to its own port (VAULT_ADDR / PROXY_ADDR is its listen address). */
  private replica(name: 'vault' | 'proxy', index: number, env: Record<string, string>): ManagedProcess {
    const port = this.ports[name][index];
    if (port === undefined) throw new Error(`the stack has no ${name} replica ${index}`);
    const proc = this.service(name, { [name === 'vault' ? 'VAULT_ADDR' : 'PROXY_ADDR']: `127.0.0.1:${port}`, ...env }).start();
    (name === 'vault' ? this.vaults : this.proxies)[index] = proc;
    if (index === 0) this[name] = proc;
    return proc;
  }

  /**
   * Starts vault replica `index` (again) on its port, e.g. after `stack.vaults[index].stop('SIGKILL')`;
   * `env` adds to or overrides the stack's environment for this process only (e.g. its own REDIS_URL).
   */
  async startVault(index = 0, env: Record<string, string> = {}): Promise<ManagedProcess> {
    const proc = this.replica('vault', index, env);
    await proc.waitForOutput('vault listening');
    return proc;
  }

  /** Starts the proxy again, e.g. after `stack.proxy.stop('SIGKILL')`. */
  async startProxy(): Promise<void> {
    this.proxy = this.service('proxy').start();
    await this.proxy.waitForOutput('proxy listening');
  }

  async start(): Promise<this> {
    const started = [
      ...this.ports.vault.map((_, i) => this.replica('vault', i, {})),
      ...this.ports.proxy.map((_, i) => this.replica('proxy', i, {})),
    ];
    this.gateway = this.service('gateway').start();
    await Promise.all([...started.map((p) => p.waitForOutput(`${p.name} listening`)), this.gateway.waitForOutput('gateway listening')]);
    await waitFor(async () => (await fetch(`${this.baseUrl}/readyz`).catch(() => undefined))?.status === 200, 'gateway /readyz');
    return this;
  }

  /** Creates an API key through the real CLI, as an operator would. */
  createKey(merchantId: string, mode: 'test' | 'live' = 'test', allowIps: string[] = []): ApiKey {
    const args = ['create', '--merchant', merchantId, '--mode', mode, '--json', ...allowIps.flatMap((cidr) => ['--allow-ip', cidr])];
    const out = this.cli(args);
    return JSON.parse(out.trim().split('\n').pop() ?? '') as ApiKey;
  }

  revokeKey(id: string): void {
    this.cli(['revoke', id]);
  }

  /** Creates a dashboard operator through the real CLI (password on stdin); merchantId null: every merchant. */
  createOperator(email: string, password: string, merchantId: string | null): void {
    const scope = merchantId === null ? ['--global'] : ['--merchant', merchantId];
    this.cli(['admin', 'create', '--email', email, ...scope, '--password-stdin'], password);
  }

  /**
   * Another gateway process on the same Redis, vault and proxy (a second replica), with extra
   * environment such as ADMIN_PORT. Stopped with the stack.
   */
  async startGatewayReplica(env: Record<string, string> = {}): Promise<{ baseUrl: string; process: ManagedProcess }> {
    const port = await freePort();
    const proc = new ManagedProcess('gateway', process.execPath, [path.join(ROOT, 'services', 'gateway', 'dist', 'main.js')], {
      ...this.env,
      PORT: String(port),
      ...env,
    });
    this.processes.push(proc);
    proc.start();
    await proc.waitForOutput('gateway listening');
    return { baseUrl: `http://127.0.0.1:${port}`, process: proc };
  }

  cli(args: string[], stdin?: string): string {
    const result = spawnSync(process.execPath, [path.join(ROOT, 'services/gateway/dist/cli/keys.js'), ...args], {
      cwd: ROOT,
      env: this.env,
      encoding: 'utf8',
      timeout: 15_000,
      ...(stdin !== undefined ? { input: stdin } : {}),
    });
    if (result.status !== 0) throw new Error(`keys CLI ${args[0]} failed (${result.status}): ${result.stderr}${result.stdout}`);
    return result.stdout;
  }

  /** Every line any service of this stack has written so far. */
  logs(): string {
    return this.processes.map((p) => p.output).join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop()));
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    for (const [i, p] of this.processes.entries()) {
      fs.writeFileSync(path.join(ARTIFACTS, `${this.name}-${i}-${p.name}.log`), p.output);
    }
    fs.rmSync(this.env.TESSERA_STATE_DIR as string, { recursive: true, force: true });
  }
}

export async function startStack(redis: RedisServer, options: StackOptions = {}): Promise<Stack> {
  const ports = async (n: number) => {
    const list: number[] = [];
    for (let i = 0; i < n; i++) list.push(await freePort());
    return list;
  };
  const vault = await ports(options.vaultReplicas ?? 1);
  const proxy = await ports(options.proxyReplicas ?? 1);
  return new Stack(redis, { vault, proxy, gateway: await freePort() }, options).start();
}

/** A small HTTP client for the gateway that always returns status, headers and parsed body. */
export interface StackFixture {
  redis: RedisServer;
  stack: Stack;
  /** Only with `psp: true`. */
  psp: PspRecorder;
}

/**
 * A test file's own Redis and stack (and, with `psp`, a recording PSP), started before its tests
 * and stopped after them. The fields are set once this beforeAll has run, so hooks and tests
 * declared after the call can use them.
 */
export function useStack(options: StackOptions & { psp?: boolean; redis?: RedisStartOptions } = {}): StackFixture {
  const { psp, redis, ...stackOptions } = options;
  const fixture = {} as StackFixture;
  beforeAll(async () => {
    fixture.redis = await startRedis(redis);
    fixture.stack = await startStack(fixture.redis, stackOptions);
    if (psp) fixture.psp = await new PspRecorder().start();
  });
  afterAll(async () => {
    await fixture.psp?.stop();
    await fixture.stack?.stop();
    await fixture.redis?.stop();
  });
  return fixture;
}

export function apiClient(stack: Stack, apiKey?: string) {
  return async function call(
    method: string,
    route: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: Headers; body: any; text: string }> {
    const init: RequestInit = { method, headers: { ...(apiKey ? { 'x-api-key': apiKey } : {}), ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${stack.baseUrl}${route}`, init);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

/**
 * CVVs with a leading zero cannot be confused with durations, ports or pids in a log line, so a
 * scan for them has no false positives.
 */
export const TEST_CVV = '046';
export const TEST_AMEX_CVV = '0461';

/** Card builders: fixtures are built, not pasted. */
export const TEST_CARDS = {
  visa: '4242424242424242',
  mastercard: '5555555555554444',
  amex: '378282246310005',
  visaDeclined: '4000000000000002',
} as const;

export function aCard(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    number: TEST_CARDS.visa,
    holderName: 'Ada Lovelace',
    expiryMonth: 12,
    expiryYear: new Date().getUTCFullYear() + 3,
    cvv: TEST_CVV,
    ...overrides,
  };
}

/**
 * Asserts that no card number (whole, or with spaces) and no CVV from the given cards appears
 * in the captured output. CVVs are matched as standalone digit groups (not inside ids or times).
 */
export function findCardDataInLogs(logs: string, pans: string[], cvvs: string[]): string[] {
  const found: string[] = [];
  for (const pan of pans) {
    const spaced = pan.replace(/(\d{4})(?=\d)/g, '$1 ');
    if (logs.includes(pan) || logs.includes(spaced)) found.push(`PAN ending ${pan.slice(-4)}`);
  }
  for (const cvv of cvvs) {
    const pattern = new RegExp(`(?<![\\w.:-])${cvv}(?![\\w.:-])`);
    if (pattern.test(logs)) found.push(`CVV ${cvv.length} digits`);
  }
  return found;
}
