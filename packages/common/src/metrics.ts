import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import { isErrorCode } from './errors';
import type { Logger } from './logger';

/**
 * Prometheus metrics, one registry per service. Label values come only from closed sets (RPC
 * names, route patterns, error codes, status classes): never a token, key, merchant, URL or
 * anything a caller typed, so no card data can reach a label and cardinality stays bounded.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/**
 * How often the event-loop lag (nodejs_eventloop_lag_*) is sampled. prom-client's 10 ms wakes
 * every service 100 times a second even when idle; between requests served one at a time that
 * was ~0.7 of the ~12 process wake-ups per /v1/proxy call (docs/PERFORMANCE.md). Ten samples a
 * second still show a blocked loop, and each sample measures the lag to the microsecond.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** METRICS_PORT unset: no metrics listener. METRICS_HOST defaults to loopback: scrape from inside. */
export const metricsEnvShape = {
  METRICS_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65535).optional()),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
};

/** An error code from the catalogue, or `other`: a label must never carry free text. */
export function outcomeLabel(err: unknown): string {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return isErrorCode(code) ? code : 'other';
}

export type RpcObserver = (rpc: string, outcome: string, seconds: number) => void;

/** tessera_rpc_requests_total{rpc,outcome} and tessera_rpc_duration_seconds{rpc}: what a gRPC service served. */
export function rpcObserver(registry: Registry): RpcObserver {
  const requests = new Counter({
    name: 'tessera_rpc_requests_total',
    help: 'RPCs served, by method and outcome (ok or a Tessera error code)',
    labelNames: ['rpc', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'tessera_rpc_duration_seconds',
    help: 'RPC handling time',
    labelNames: ['rpc'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return (rpc, outcome, seconds) => {
    requests.inc({ rpc, outcome });
    duration.observe({ rpc }, seconds);
  };
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** GET /metrics on its own listener, so the scrape port can stay off the public network. */
export async function startMetricsServer(registry: Registry, host: string, port: number, logger: Logger): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => {
        logger.error({ err }, 'metrics collection failed');
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  logger.info({ url: `http://${host}:${bound}/metrics` }, 'metrics listening');
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * tessera_events_record_failures_total{type}: events a service could not record (Redis down, or an
 * object its schema refused). The action they describe happened all the same; an alert on this
 * rate is how an operator learns merchants missed events. The type (a closed set, EVENT_TYPES of
 * @tessera/merchant-data) only, never an object.
 */
export function eventFailureCounter(registry: Registry): (type: string) => void {
  const failures = new Counter({
    name: 'tessera_events_record_failures_total',
    help: 'Events that could not be recorded (the action itself succeeded), by event type',
    labelNames: ['type'],
    registers: [registry],
  });
  return (type) => failures.inc({ type });
}
