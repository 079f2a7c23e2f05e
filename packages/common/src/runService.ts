import type { Registry } from 'prom-client';
import type { z } from 'zod';
import { loadConfigOrExit } from './config';
import { limitHeapGrowth } from './heapGrowth';
import { withDeadline } from './deadline';
import { createLogger, type Logger } from './logger';
import { createMetricsRegistry, startMetricsServer, type MetricsServer } from './metrics';
import { onShutdownSignal } from './shutdownSignal';

/** Something that takes work from outside: a gRPC server, an HTTP server. */
export interface Listener {
  /** Stops taking new work and resolves once the work in flight is done. */
  drain(): Promise<void>;
  /** Cuts the work still in flight: called only when drain() outlived the grace deadline. */
  cut(): void;
}

/** Something the service uses to reach out (a gRPC client, Redis, the PSP egress, a log buffer), closed after the listeners drained. */
export interface Closable {
  /** Named in the warning when closing it fails. */
  name: string;
  close(): void | Promise<void>;
}

/** What a service's start-up built; runService tears it down in one order. */
export interface RunningService {
  /** Drained together on SIGTERM/SIGINT. */
  listeners: readonly Listener[];
  /** Closed one after the other, in this order, once every listener has drained (or was cut). */
  clients: readonly Closable[];
  /** Fields of the '<name> listening' line (e.g. the bound address): harnesses wait for that line. */
  listening: Record<string, unknown>;
  /** How long the listeners may drain before what is still open is cut; DEFAULT_DRAIN_GRACE_MS if unset. */
  drainGraceMs?: number;
}

/** What every service's start-up is given. */
export interface ServiceContext<C> {
  config: C;
  logger: Logger;
  /** The service's registry; served on METRICS_HOST:METRICS_PORT when that is set. */
  metrics: Registry;
}

/** The settings runService itself reads from every service's config. */
export interface ServiceBaseConfig {
  LOG_LEVEL: string;
  METRICS_PORT?: number | undefined;
  METRICS_HOST: string;
}

export interface ServiceDefinition<S extends z.ZodType<ServiceBaseConfig>> {
  /** 'vault', 'proxy', 'gateway': the logger's name and the start of the lines harnesses wait for. */
  name: string;
  configSchema: S;
  /** Bindings on every line of this process (e.g. a cluster worker's id). */
  logBindings?: Record<string, unknown>;
  /**
   * Builds and binds the service. `undefined`: this process serves nothing itself and its life is
   * owned elsewhere (the gateway's cluster primary, which supervises workers and their signals).
   */
  start(context: ServiceContext<z.infer<S>>): Promise<RunningService | undefined>;
}

/** The process around a service; replaced in tests. */
export interface ServiceRuntime {
  env: NodeJS.ProcessEnv;
  onShutdownSignal(shutdown: (signal: NodeJS.Signals) => void): void;
  exit(code: number): void;
  stderr(line: string): void;
  createLogger(name: string, level: string): Logger;
  limitHeapGrowth(): void;
}

/** Longest wait for in-flight work (a PSP call, a render) on shutdown before connections are cut. */
export const DEFAULT_DRAIN_GRACE_MS = 10_000;

/** Longest wait for one client to close: a Redis that never answers QUIT must not hold the exit. */
export const CLIENT_CLOSE_LIMIT_MS = 5_000;

const processRuntime: ServiceRuntime = {
  env: process.env,
  onShutdownSignal,
  exit: (code) => process.exit(code),
  stderr: (line) => process.stderr.write(line),
  createLogger,
  limitHeapGrowth: () => void limitHeapGrowth(),
};

/**
 * Starts a service and owns its life: config (a bad one exits 78), logger, metrics registry and
 * its listener (METRICS_PORT), the heap policy, the '<name> listening' line, and one teardown for
 * every service. On the first SIGTERM/SIGINT: the listeners drain together (cut at the grace
 * deadline), then the metrics listener closes, then the clients close in the order given (nothing
 * the in-flight work needed goes before that work is done), then '<name> stopped' is logged and
 * the logger flushed, then the process exits: 0, or 1 when a step failed. A start-up that throws
 * writes one stderr line and exits 1 (never the error object: it may carry a config value).
 */
export async function runService<S extends z.ZodType<ServiceBaseConfig>>(
  service: ServiceDefinition<S>,
  runtime: ServiceRuntime = processRuntime,
): Promise<void> {
  // Every launcher (npm start, the bench, the harnesses, Docker, Kubernetes) comes through here.
  runtime.limitHeapGrowth();
  try {
    const config = loadConfigOrExit(service.configSchema, runtime.env, service.name);
    const rootLogger = runtime.createLogger(service.name, config.LOG_LEVEL);
    const logger = service.logBindings === undefined ? rootLogger : rootLogger.child(service.logBindings);
    const metrics = createMetricsRegistry(service.name);
    const running = await service.start({ config, logger, metrics });
    if (running === undefined) return;
    const metricsServer =
      config.METRICS_PORT === undefined ? undefined : await startMetricsServer(metrics, config.METRICS_HOST, config.METRICS_PORT, logger);
    logger.info(running.listening, `${service.name} listening`);
    runtime.onShutdownSignal((signal) => {
      logger.info({ signal }, `${service.name} shutting down`);
      void tearDown(service.name, running, metricsServer, logger).then((clean) => {
        logger.info(`${service.name} stopped`);
        logger.flush(() => runtime.exit(clean ? 0 : 1));
      });
    });
  } catch (err) {
    runtime.stderr(`[${service.name}] failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    runtime.exit(1);
  }
}

/** Resolves to false when a step failed (each failure is logged; the steps after it still run). */
async function tearDown(name: string, running: RunningService, metricsServer: MetricsServer | undefined, logger: Logger): Promise<boolean> {
  let clean = true;
  const graceMs = running.drainGraceMs ?? DEFAULT_DRAIN_GRACE_MS;
  await Promise.all(
    running.listeners.map(async (listener) => {
      try {
        if (await within(graceMs, listener.drain())) return;
        logger.warn({ graceMs }, `${name}: work still in flight at the drain deadline is cut`);
      } catch (err) {
        clean = false;
        logger.warn({ err }, `${name}: a listener failed to drain; what it still holds is cut`);
      }
      listener.cut();
    }),
  );
  await metricsServer?.close();
  for (const client of running.clients) {
    try {
      if (!(await within(CLIENT_CLOSE_LIMIT_MS, Promise.resolve(client.close())))) {
        clean = false;
        logger.warn({ client: client.name, limitMs: CLIENT_CLOSE_LIMIT_MS }, 'closing a client timed out');
      }
    } catch (err) {
      clean = false;
      logger.warn({ err, client: client.name }, 'closing a client failed');
    }
  }
  return clean;
}

class DeadlinePassed extends Error {}

/** True when `work` settled within `ms`; false when the deadline came first (the work is left running). */
async function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  try {
    await withDeadline(work, ms, () => new DeadlinePassed());
    return true;
  } catch (err) {
    if (err instanceof DeadlinePassed) return false;
    throw err instanceof Error ? err : new Error(String(err));
  }
}
