import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManagedProcess, ROOT, type ManagedProcessOptions } from './managedProcess';
import { startRedisServer, type RedisServerOptions, type RedisServerProcess } from './redisServer';
import { httpOk, tcpOpen, waitFor } from './wait';

export type ServiceName = 'vault' | 'proxy' | 'gateway' | 'admin' | 'fields' | 'inbound';

/** The HTTP services besides the gateway, each on a port of its own (ADMIN_PORT, FIELDS_PORT, INBOUND_PORT). */
export type EdgeServiceName = 'admin' | 'fields' | 'inbound';

/** The upstream addresses of the stack's environment a service never dials, so is not given. */
const UPSTREAMS_NOT_DIALED: Partial<Record<ServiceName, string[]>> = { admin: ['VAULT_ADDR', 'PROXY_ADDR'] };

/** One gRPC target naming every replica's port, as the services' VAULT_ADDR / PROXY_ADDR take it. */
export function grpcTargetOf(ports: readonly number[]): string {
  const addresses = ports.map((port) => `127.0.0.1:${port}`);
  return addresses.length === 1 ? (addresses[0] as string) : `ipv4:${addresses.join(',')}`;
}

export interface ServiceStackOptions {
  /**
   * Environment of every service and CLI. Without `redis` it must name one (REDIS_URL or
   * REDIS_CLUSTER_NODES): the gateway and the vault refuse to start without Redis. VAULT_ADDR,
   * PROXY_ADDR and PORT are set from `ports`.
   */
  env: NodeJS.ProcessEnv;
  /**
   * One port per vault and proxy replica (each binds its own; clients dial them all), the gateway's,
   * and the admin, fields and inbound services' when the stack runs them (ADMIN_PORT, FIELDS_PORT, INBOUND_PORT).
   */
  ports: { vault: number[]; proxy: number[]; gateway: number; admin?: number; fields?: number; inbound?: number };
  /** Start a private redis-server first and give its URL as REDIS_URL. */
  redis?: RedisServerOptions;
  /** Environment of one kind of service only, over `env` (e.g. its own TLS certificate). */
  serviceEnv?: (name: ServiceName) => NodeJS.ProcessEnv;
  /** Node flags for the service processes (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Options of every process the stack starts, by process name (log file, line and crash handlers). */
  processOptions?: (name: string) => ManagedProcessOptions;
  /** How long each service has to listen, and then the gateway to answer /readyz (default 30 s each). */
  readyTimeoutMs?: number;
}

/**
 * The stack as it runs in production, one process per service from the built dist/ entry points:
 * an optional private redis-server, vault and proxy replicas, the gateway, and any helper process
 * (a PSP, an example app) that should stop with it. npm start, the bench and the integration
 * tests all start the stack through this class.
 */
export class ServiceStack {
  readonly processes: ManagedProcess[] = [];
  /** The first vault and proxy replica; `vaults` / `proxies` hold all of them, in port order. */
  vault!: ManagedProcess;
  proxy!: ManagedProcess;
  readonly vaults: ManagedProcess[] = [];
  readonly proxies: ManagedProcess[] = [];
  gateway!: ManagedProcess;
  /** Set by start() when `ports` names them. */
  admin: ManagedProcess | undefined;
  fields: ManagedProcess | undefined;
  inbound: ManagedProcess | undefined;
  /** Set by start() when `redis` was given. */
  redisServer: RedisServerProcess | undefined;
  readonly baseUrl: string;
  readonly env: NodeJS.ProcessEnv;
  readonly ports: ServiceStackOptions['ports'];
  private readonly tempDirs: string[] = [];

  constructor(private readonly options: ServiceStackOptions) {
    this.ports = options.ports;
    this.baseUrl = `http://127.0.0.1:${options.ports.gateway}`;
    this.env = {
      ...options.env,
      VAULT_ADDR: grpcTargetOf(options.ports.vault),
      PROXY_ADDR: grpcTargetOf(options.ports.proxy),
      PORT: String(options.ports.gateway),
      ...(options.ports.admin !== undefined ? { ADMIN_PORT: String(options.ports.admin) } : {}),
      // The gateway names the fields service's origin in a form session's page URL.
      ...(options.ports.fields !== undefined
        ? { FIELDS_PORT: String(options.ports.fields), FIELDS_ORIGIN: `http://127.0.0.1:${options.ports.fields}` }
        : {}),
      ...(options.ports.inbound !== undefined ? { INBOUND_PORT: String(options.ports.inbound) } : {}),
    };
  }

  /** A temporary directory removed when the stack stops (e.g. TESSERA_STATE_DIR). */
  tempDir(prefix: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    this.tempDirs.push(dir);
    return dir;
  }

  /** Any other process, started now and stopped with the stack. */
  spawn(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ManagedProcess {
    const proc = new ManagedProcess(name, command, args, env, this.options.processOptions?.(name));
    this.processes.push(proc);
    return proc.start();
  }

  /** A Node script of the repository (e.g. packages/sandbox-psp/dist/main.js), started now. */
  spawnNode(name: string, script: string, env: NodeJS.ProcessEnv, args: string[] = []): ManagedProcess {
    return this.spawn(name, process.execPath, [path.join(ROOT, script), ...args], env);
  }

  /** A service process from its built entry point, with the stack's environment under `env`. */
  startService(name: ServiceName, env: NodeJS.ProcessEnv = {}): ManagedProcess {
    const entry = path.join('services', name, 'dist', 'main.js');
    if (!fs.existsSync(path.join(ROOT, entry))) throw new Error(`${entry} is missing: run npm run build first`);
    const environment: NodeJS.ProcessEnv = { ...this.env, ...this.serviceEnvOf(name), ...env };
    // Least privilege in the environment too: admin is told of neither the vault nor the proxy. The
    // fields service dials the proxy for completion calls, which is all the proxy lets it do.
    for (const variable of UPSTREAMS_NOT_DIALED[name] ?? []) delete environment[variable];
    const proc = new ManagedProcess(
      name,
      process.execPath,
      [...(this.options.nodeArgs ?? []), path.join(ROOT, entry)],
      environment,
      this.options.processOptions?.(name),
    );
    this.processes.push(proc);
    return proc.start();
  }

  /**
   * Starts vault or proxy replica `index` (again) on its port, e.g. after
   * `stack.vaults[index].stop('SIGKILL')`; `env` adds to or overrides the stack's environment for
   * this process only (e.g. its own REDIS_URL). Resolves once it listens.
   */
  async startReplica(name: 'vault' | 'proxy', index = 0, env: NodeJS.ProcessEnv = {}): Promise<ManagedProcess> {
    const proc = this.replica(name, index, env);
    await this.listening(proc, this.ports[name][index] as number);
    return proc;
  }

  /** Resolves once the process logs "<name> listening" (or, without captured output, its port accepts). */
  async listening(proc: ManagedProcess, port: number): Promise<void> {
    const timeoutMs = this.options.readyTimeoutMs ?? 30_000;
    if (proc.capturesOutput) return proc.waitForOutput(`${proc.name} listening`, timeoutMs);
    await waitFor(
      async () => {
        if (!proc.running) throw new Error(`${proc.name} exited early (${proc.options.logFile ?? 'see its output'})`);
        return tcpOpen(port);
      },
      `${proc.name} to listen on ${port}`,
      timeoutMs,
    );
  }

  /** Resolves once the gateway answers /readyz with 200 (its vault and proxy are reachable). */
  async ready(baseUrl = this.baseUrl): Promise<void> {
    await waitFor(
      async () => {
        if (!this.gateway.running) throw new Error(`gateway exited early:\n${this.gateway.output.slice(-4000)}`);
        return httpOk(`${baseUrl}/readyz`);
      },
      `gateway ${baseUrl}/readyz`,
      this.options.readyTimeoutMs ?? 30_000,
    );
  }

  /**
   * Redis (if asked for), every replica, the gateway, admin, fields and inbound (those the ports name);
   * resolves when each listens and the gateway is ready.
   * When any of them fails to start (a port in use, a bad setting), what was started is stopped
   * before the error is thrown: a caller that never got a stack cannot stop it.
   */
  async start(): Promise<this> {
    try {
      if (this.options.redis) {
        this.redisServer = await startRedisServer({ process: this.options.processOptions?.('redis'), ...this.options.redis });
        this.processes.push(this.redisServer.process);
        this.env.REDIS_URL = this.redisServer.url;
      }
      const replicas = (['vault', 'proxy'] as const).flatMap((name) =>
        this.ports[name].map((port, i) => ({ proc: this.replica(name, i, {}), port })),
      );
      this.gateway = this.startService('gateway');
      const edges = (['admin', 'fields', 'inbound'] as const).flatMap((name) => {
        const port = this.ports[name];
        if (port === undefined) return [];
        const proc = this.startService(name);
        this[name] = proc;
        return [{ proc, port }];
      });
      await Promise.all([
        ...replicas.map(({ proc, port }) => this.listening(proc, port)),
        this.listening(this.gateway, this.ports.gateway),
        ...edges.map(({ proc, port }) => this.listening(proc, port)),
      ]);
      await this.ready();
      return this;
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** The admin service's base URL (dashboard at /dashboard/, admin API at /admin/v1), when the stack runs it. */
  get adminUrl(): string {
    if (this.ports.admin === undefined) throw new Error('this stack runs no admin service (ports.admin)');
    return `http://127.0.0.1:${this.ports.admin}`;
  }

  /** The fields service's base URL (tessera.js, card fields, hosted page, browser routes), when the stack runs it. */
  get fieldsUrl(): string {
    if (this.ports.fields === undefined) throw new Error('this stack runs no fields service (ports.fields)');
    return `http://127.0.0.1:${this.ports.fields}`;
  }

  /** The inbound routes' base URL (INBOUND_PORT), when the stack runs the inbound service. */
  get inboundUrl(): string {
    if (this.ports.inbound === undefined) throw new Error('this stack runs no inbound service (ports.inbound)');
    return `http://127.0.0.1:${this.ports.inbound}`;
  }

  /** Every line any process of this stack has written so far (with captured output). */
  logs(): string {
    return this.processes.map((p) => p.output).join('\n');
  }

  /** SIGTERM to every process, SIGKILL to any still running after `graceMs`; temporary directories removed. */
  async stop(graceMs = 5_000): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop('SIGTERM', graceMs)));
    if (this.redisServer) await this.redisServer.stop();
    for (const dir of this.tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  }

  /** The environment of one kind of service over the stack's (subclasses add e.g. its own certificate). */
  protected serviceEnvOf(name: ServiceName): NodeJS.ProcessEnv {
    return this.options.serviceEnv?.(name) ?? {};
  }

  private replica(name: 'vault' | 'proxy', index: number, env: NodeJS.ProcessEnv): ManagedProcess {
    const port = this.ports[name][index];
    if (port === undefined) throw new Error(`the stack has no ${name} replica ${index}`);
    // VAULT_ADDR / PROXY_ADDR is what clients dial and, for the service itself, its listen address.
    const proc = this.startService(name, { [name === 'vault' ? 'VAULT_ADDR' : 'PROXY_ADDR']: `127.0.0.1:${port}`, ...env });
    (name === 'vault' ? this.vaults : this.proxies)[index] = proc;
    if (index === 0) this[name] = proc;
    return proc;
  }
}
