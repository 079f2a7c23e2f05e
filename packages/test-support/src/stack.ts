/**
 * The integration tests' stack: real redis-server, real vault/proxy/gateway/admin processes (the
 * compiled dist/ entry points, as in production, started by @tessera/stack), and a recording HTTP
 * server as the PSP. Every process's output is captured so tests can prove that no card data
 * reaches a log.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { devTlsFiles, generateDevCertificates } from '@tessera/protos';
import { httpOk, ManagedProcess, ROOT, ServiceStack, waitFor, type ServiceName } from '@tessera/stack';
import { PspRecorder } from './psp';
import { freePort, startRedis, type RedisServer, type RedisStartOptions } from './redisServer';

const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'logs');

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
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Mutual TLS between the services with certificates made by generateDevCertificates (npm run certs). */
  tls?: boolean;
  /**
   * Vault and proxy processes, each on its own port (1 by default). With more than one, the
   * gateway and the proxies dial them as one static target (`ipv4:127.0.0.1:a,127.0.0.1:b`).
   */
  vaultReplicas?: number;
  proxyReplicas?: number;
  /** Every process writes its output to <logDir>/<name>.log instead of memory (the shared stacks: sharedStack.ts). */
  logDir?: string;
  /** Also run the inbound routes service (INBOUND_PORT, stack.inboundUrl). */
  inbound?: boolean;
}

/**
 * One key ring per Redis, as in production: a second stack on a test's Redis (other settings, a
 * restart) opens what the first wrote, the fingerprint key included.
 */
const vaultKeysByRedis = new Map<string, string>();
function vaultKeysFor(redis: RedisServer): string {
  let keys = vaultKeysByRedis.get(redis.url);
  if (keys === undefined) {
    keys = `test1:${randomBytes(32).toString('base64')}`;
    vaultKeysByRedis.set(redis.url, keys);
  }
  return keys;
}

/** The environment every test stack runs with: real secrets and Redis, limits no test trips by accident. */
function testEnv(redis: RedisServer, stateDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'test',
    LOG_LEVEL: 'debug',
    REDIS_URL: redis.url,
    ...(redis.tlsCaFile ? { REDIS_TLS_CA_FILE: redis.tlsCaFile } : {}),
    HOST: '127.0.0.1',
    VAULT_KEYS: vaultKeysFor(redis),
    API_KEY_PEPPER: randomBytes(32).toString('hex'),
    PSP_ALLOWED_CIDRS: '127.0.0.1/32',
    // PSP recorders listen on ephemeral ports, opened as a range; ports below 1024 (SSH, SMTP,
    // ...) stay refused, and the proxy's unit tests cover the port rule itself.
    PSP_ALLOWED_PORTS: '1024-65535',
    // No webhook deliveries unless a test asks for them (WEBHOOK_DELIVERY: 'on', with a receiver on
    // loopback): an endpoint a test registers at https://shop.example/… would otherwise have the
    // proxy resolve a public name.
    WEBHOOK_DELIVERY: 'off',
    // Every test client is 127.0.0.1 and tests fail authentication on purpose: limits high
    // enough never to trip by accident, still enforced (rateLimits.test.ts sets low ones).
    RATE_LIMIT_PER_KEY_PER_SECOND: '100000',
    RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: '100000',
    // The command timeout, not 100 ms: three test files at a time on two cores can hold a gateway's
    // event loop past 100 ms, and a limit test must not see its counter fail open then
    // (clusterMerchantFailover sets the default back to check what it is for).
    RATE_LIMIT_STORE_TIMEOUT_MS: '1000',
    // Likewise the card-testing limits on browser tokenization (browserCardTesting.test.ts sets low ones).
    BROWSER_TOKENS_PER_KEY_PER_MINUTE: '100000',
    BROWSER_TOKENS_PER_IP_PER_MINUTE: '100000',
    BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: '100000',
    // And on inbound routes; which read the routes afresh on every request, so a route applied
    // by a test serves its next request (the cache is tested in the service's own tests).
    INBOUND_CARDS_PER_ROUTE_PER_MINUTE: '100000',
    INBOUND_CARDS_PER_IP_PER_MINUTE: '100000',
    INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR: '100000',
    INBOUND_ROUTE_CACHE_MS: '0',
    // The proxy lets the inbound identity make ForwardUpstream (the vault's default is this name too).
    TLS_PEER_INBOUND: 'inbound',
    // startRedis runs appendfsync always: every integration test checks the durable write path.
    VAULT_WRITE_ACK: 'aof',
    TESSERA_STATE_DIR: stateDir,
    ...extra,
  };
}

export class Stack extends ServiceStack {
  private readonly name = `stack-${process.pid}-${randomBytes(3).toString('hex')}`;
  /** Set when the stack runs with mTLS: each service's own files live in <certDir>/<service>/ (devTlsFiles). */
  readonly certDir: string | undefined;

  constructor(
    readonly redis: RedisServer,
    ports: { vault: number[]; proxy: number[]; gateway: number; admin?: number; fields?: number; inbound?: number },
    options: StackOptions,
  ) {
    super({
      env: {},
      ports,
      ...(options.logDir !== undefined && {
        processOptions: (name: string) => ({ logFile: path.join(options.logDir as string, `${name}.log`) }),
      }),
    });
    this.testOptions = options;
    Object.assign(this.env, testEnv(redis, this.tempDir('tessera-state-'), options.env));
    if (options.tls) {
      this.certDir = path.join(this.env.TESSERA_STATE_DIR as string, 'certs');
      generateDevCertificates(this.certDir, ['gateway', 'vault', 'proxy', 'fields', 'inbound']);
    }
  }

  private readonly testOptions: StackOptions;

  protected override serviceEnvOf(name: ServiceName): NodeJS.ProcessEnv {
    return { ...this.tlsEnv(name), ...this.redisEnv(name), ...this.testOptions.serviceEnv?.[name] };
  }

  /** Each service gets its own certificate; the shared env (used by the CLIs too) has none. */
  private tlsEnv(name: ServiceName): NodeJS.ProcessEnv {
    if (this.certDir === undefined) return {};
    const { caFile, certFile, keyFile } = devTlsFiles(this.certDir, name);
    return { TLS_CA_FILE: caFile, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile };
  }

  /**
   * With Redis ACL users each service logs in as its own user and the proxy gets no Redis at all;
   * the shared env's URL, which the keys and admin CLIs use, is the admin user's (redis.url).
   */
  private redisEnv(name: ServiceName): NodeJS.ProcessEnv {
    if (this.redis.users === undefined) return {};
    return { REDIS_URL: name === 'proxy' ? undefined : this.redis.users[name] };
  }

  /**
   * Starts vault replica `index` (again) on its port, e.g. after `stack.vaults[index].stop('SIGKILL')`;
   * `env` adds to or overrides the stack's environment for this process only (e.g. its own REDIS_URL).
   */
  async startVault(index = 0, env: Record<string, string> = {}): Promise<ManagedProcess> {
    return this.startReplica('vault', index, env);
  }

  /** Starts the proxy again, e.g. after `stack.proxy.stop('SIGKILL')`. */
  async startProxy(): Promise<void> {
    await this.startReplica('proxy', 0);
  }

  /** Creates an API key through the real CLI, as an operator would. */
  createKey(merchantId: string, mode: 'test' | 'live' = 'test', allowIps: string[] = []): ApiKey {
    const args = ['create', '--merchant', merchantId, '--mode', mode, '--json', ...allowIps.flatMap((cidr) => ['--allow-ip', cidr])];
    const out = this.cli(args);
    return JSON.parse(out.trim().split('\n').pop() ?? '') as ApiKey;
  }

  /** Creates a publishable key (tpk_…) for the card fields of `origins` through the real CLI. */
  createPublishableKey(merchantId: string, origins: string[], mode: 'test' | 'live' = 'test'): ApiKey {
    const args = [
      'create',
      '--kind',
      'publishable',
      '--merchant',
      merchantId,
      '--mode',
      mode,
      '--json',
      ...origins.flatMap((o) => ['--origin', o]),
    ];
    return JSON.parse(this.cli(args).trim().split('\n').pop() ?? '') as ApiKey;
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
   * environment such as FIELDS_PORT; resolves once it answers /readyz (`waitReady: false` for a
   * replica meant not to be ready). Stopped with the stack.
   */
  async startGatewayReplica(
    env: Record<string, string> = {},
    { waitReady = true }: { waitReady?: boolean } = {},
  ): Promise<{ baseUrl: string; process: ManagedProcess }> {
    const port = await freePort();
    const proc = this.spawn('gateway', process.execPath, [path.join(ROOT, 'services', 'gateway', 'dist', 'main.js')], {
      ...this.env,
      ...this.redisEnv('gateway'),
      PORT: String(port),
      ...env,
    });
    await proc.waitForOutput('gateway listening');
    // Listening is not ready: until /readyz answers, its vault and proxy channels may still be
    // connecting and a first call can fail fast (deadlines.test saw a 503 from a replica that
    // had only just logged 'gateway listening').
    const baseUrl = `http://127.0.0.1:${port}`;
    if (waitReady) {
      await waitFor(
        async () => {
          if (!proc.running) throw new Error(`gateway replica exited early:\n${proc.output.slice(-4000)}`);
          return httpOk(`${baseUrl}/readyz`);
        },
        `gateway replica ${baseUrl}/readyz`,
        30_000,
      );
    }
    return { baseUrl, process: proc };
  }

  /**
   * Another fields service process on the same Redis and vault (a second replica), with extra
   * environment. Stopped with the stack.
   */
  async startFieldsReplica(env: Record<string, string> = {}): Promise<{ baseUrl: string; process: ManagedProcess }> {
    const port = await freePort();
    const proc = this.spawn('fields', process.execPath, [path.join(ROOT, 'services', 'fields', 'dist', 'main.js')], {
      ...this.env,
      ...this.serviceEnvOf('fields'),
      FIELDS_PORT: String(port),
      ...env,
    });
    await proc.waitForOutput('fields listening');
    return { baseUrl: `http://127.0.0.1:${port}`, process: proc };
  }

  /** The keys CLI (`npm run keys`, the admin service's), on the stack's Redis and pepper. */
  cli(args: string[], stdin?: string): string {
    const result = spawnSync(process.execPath, [path.join(ROOT, 'services/admin/dist/cli/keys.js'), ...args], {
      cwd: ROOT,
      env: this.env,
      encoding: 'utf8',
      // A CLI start is about a second of CPU; with the suite's workers and their browsers on two cores it can take many.
      timeout: 60_000,
      ...(stdin !== undefined ? { input: stdin } : {}),
    });
    if (result.status !== 0) throw new Error(`keys CLI ${args[0]} failed (${result.status}): ${result.stderr}${result.stdout}`);
    return result.stdout;
  }

  /** Stops every process and keeps its output in test-artifacts/logs for a human to read. */
  override async stop(): Promise<void> {
    await super.stop();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    for (const [i, p] of this.processes.entries()) {
      fs.writeFileSync(path.join(ARTIFACTS, `${this.name}-${i}-${p.name}.log`), p.output);
    }
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
  const inbound = options.inbound ? { inbound: await freePort() } : {};
  return new Stack(
    redis,
    { vault, proxy, gateway: await freePort(), admin: await freePort(), fields: await freePort(), ...inbound },
    options,
  ).start();
}

export interface StackFixture {
  redis: RedisServer;
  stack: Stack;
  /** Only with `psp: true`. */
  psp: PspRecorder;
}

export type UseStackOptions = StackOptions & { psp?: boolean; redis?: RedisStartOptions };

/**
 * A test file's own Redis and stack (and, with `psp`, a recording PSP), started before its tests
 * and stopped after them. The fields are set once this beforeAll has run, so hooks and tests
 * declared after the call can use them. Options given as a function are read in that beforeAll,
 * after the hooks declared before the call (e.g. one that starts a Redis of the vault's own).
 */
export function useStack(given: UseStackOptions | (() => UseStackOptions) = {}): StackFixture {
  const fixture = {} as StackFixture;
  beforeAll(async () => {
    const { psp, redis, ...stackOptions } = typeof given === 'function' ? given() : given;
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

/**
 * A small HTTP client for the gateway (or, with `base`, another service of the stack, such as
 * `stack.adminUrl`) that always returns status, headers and parsed body.
 */
export function apiClient(stack: Stack, apiKey?: string, base?: string) {
  return async function call(method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
    const init: RequestInit = { method, headers: { ...(apiKey ? { 'x-api-key': apiKey } : {}), ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    return readResponse(await fetch(`${base ?? stack.baseUrl}${route}`, init));
  };
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined when the body is empty or not JSON (`text` has it as sent). */
  body: any;
  text: string;
}

/** Status, headers, text and parsed body of a response, whatever its content. */
export async function readResponse(res: Response): Promise<TestResponse> {
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
