import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { call } from './edge';
import type { ProtoGrpcType as HealthProto } from './generated/health';
import type { HealthClient, HealthHandlers } from './generated/grpc/health/v1/Health';
import type { HealthCheckResponse__Output } from './generated/grpc/health/v1/HealthCheckResponse';
import type { HealthCheckRequest } from './generated/grpc/health/v1/HealthCheckRequest';

export type { HealthClient, HealthHandlers, HealthCheckResponse__Output };

/** Same root as the Tessera protos (see PROTO_ROOT in index.ts). */
const healthProto = grpc.loadPackageDefinition(
  protoLoader.loadSync('grpc/health/v1/health.proto', {
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: [path.resolve(__dirname, '../../../proto')],
  }),
) as unknown as HealthProto;

/** The standard grpc.health.v1.Health service, for standard probes (grpc_health_probe, Kubernetes). */
export const healthService = healthProto.grpc.health.v1.Health.service;

export function createHealthClient(
  address: string,
  credentials = grpc.credentials.createInsecure(),
  options: grpc.ChannelOptions = {},
): HealthClient {
  return new healthProto.grpc.health.v1.Health(address, credentials, options);
}

/** Both methods: Check for probes, Watch for clients that balance over replicas (see loadBalancing.ts). */
export type HealthCheckHandlers = HealthHandlers;

type ServingStatus = 'SERVING' | 'NOT_SERVING';

export interface HealthServiceOptions {
  /** How often readiness is re-evaluated while a client watches; a change reaches every watcher at once. */
  pollIntervalMs?: number;
  /** A readiness check slower than this reads as NOT_SERVING (a stalled Redis must not look healthy). */
  checkTimeoutMs?: number;
}

export interface HealthService {
  handlers: HealthCheckHandlers;
  /**
   * On shutdown: every watcher is told NOT_SERVING and its stream ends (an open Watch would
   * otherwise hold the server's graceful shutdown until its deadline); later calls get the same.
   */
  shutdown(): void;
}

export const DEFAULT_HEALTH_POLL_INTERVAL_MS = 500;
export const DEFAULT_HEALTH_CHECK_TIMEOUT_MS = 500;

function readinessWithin(isReady: () => Promise<boolean>, timeoutMs: number): Promise<ServingStatus> {
  return new Promise<ServingStatus>((resolve) => {
    // Whichever settles first wins; the timer must not keep a stopping process alive.
    setTimeout(() => resolve('NOT_SERVING'), timeoutMs).unref();
    isReady().then(
      (ready) => resolve(ready ? 'SERVING' : 'NOT_SERVING'),
      () => resolve('NOT_SERVING'),
    );
  });
}

type Watcher = grpc.ServerWritableStream<unknown, { status: string }>;

/**
 * grpc.health.v1 for a server whose services are `services` (full names, e.g.
 * `tessera.vault.v1.Vault`). The empty name means the server as a whole (the spec's convention);
 * both answer what `isReady` says, SERVING or NOT_SERVING. A failing or slow readiness check reads
 * as NOT_SERVING, never as an error the prober could misread.
 *
 * Check answers an unknown name NOT_FOUND; Watch sends SERVICE_UNKNOWN and keeps the stream open,
 * as the spec requires. Readiness is polled only while someone watches, and each change is pushed
 * to every watcher at once, so a replica whose store fails leaves its clients' rotation within
 * about one poll interval plus the check timeout.
 */
export function createHealthService(
  services: readonly string[],
  isReady: () => Promise<boolean>,
  options: HealthServiceOptions = {},
): HealthService {
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_HEALTH_POLL_INTERVAL_MS;
  const checkTimeoutMs = options.checkTimeoutMs ?? DEFAULT_HEALTH_CHECK_TIMEOUT_MS;
  const known = new Set(['', ...services]);
  const watchers = new Set<Watcher>();
  /** Watches of names this server does not serve: they never change, but shutdown ends them too. */
  const unknownWatchers = new Set<Watcher>();
  let current: ServingStatus | undefined;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  let stopped = false;

  const poll = (): void => {
    if (polling || stopped) return;
    polling = true;
    void readinessWithin(isReady, checkTimeoutMs).then((status) => {
      polling = false;
      if (stopped || watchers.size === 0) return;
      if (status !== current) {
        current = status;
        for (const call of watchers) call.write({ status });
      }
      timer = setTimeout(poll, pollIntervalMs);
    });
  };
  const stopPolling = (): void => {
    clearTimeout(timer);
    timer = undefined;
    // The next first watcher starts from a fresh check, not from a status that may be stale.
    current = undefined;
  };

  const handlers: HealthCheckHandlers = {
    Check(call, callback) {
      if (!known.has(call.request.service)) {
        callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        return;
      }
      if (stopped) callback(null, { status: 'NOT_SERVING' });
      else void readinessWithin(isReady, checkTimeoutMs).then((status) => callback(null, { status }));
    },
    Watch(call) {
      const watcher = call as unknown as Watcher;
      if (stopped) {
        watcher.write({ status: 'NOT_SERVING' });
        watcher.end();
        return;
      }
      if (!known.has(call.request.service)) {
        watcher.write({ status: 'SERVICE_UNKNOWN' });
        unknownWatchers.add(watcher);
        call.on('cancelled', () => unknownWatchers.delete(watcher));
        return;
      }
      watchers.add(watcher);
      call.on('cancelled', () => {
        watchers.delete(watcher);
        if (watchers.size === 0) stopPolling();
      });
      if (current !== undefined) watcher.write({ status: current });
      else if (timer === undefined) poll();
    },
  };
  return {
    handlers,
    shutdown() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      for (const call of watchers) call.write({ status: 'NOT_SERVING' });
      for (const call of [...watchers, ...unknownWatchers]) call.end();
      watchers.clear();
      unknownWatchers.clear();
    },
  };
}

/** Check and Watch of createHealthService, for a server that never needs to end open Watch streams. */
export function createHealthHandlers(services: readonly string[], isReady: () => Promise<boolean>): HealthCheckHandlers {
  return createHealthService(services, isReady).handlers;
}

/** One Check with a deadline; resolves to the status or rejects with the gRPC error. */
export function checkHealth(client: HealthClient, service: string, timeoutMs: number): Promise<HealthCheckResponse__Output['status']> {
  return new Promise((resolve, reject) => {
    client.Check({ service }, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
      if (err) reject(err);
      else resolve(res?.status ?? 'UNKNOWN');
    });
  });
}

/** Whether a service answers, and if not, why (for logs; /readyz shows only ok or unavailable). */
export interface Readiness {
  ready: boolean;
  detail: string;
}

/**
 * Asks grpc.health.v1 Check for `service` over `client`'s own channel: the same replicas (a
 * balanced channel sends it to a SERVING one when there is one), the same credentials and no
 * second connection. `peer` names the service in `detail`, e.g. "vault". A Check that gets no
 * answer rejects as any call does (see `call`): 503 service_unavailable.
 */
export function readinessOverChannel(
  client: grpc.Client,
  service: string,
  peer: string,
): (opts: { timeoutMs: number; requestId?: string }) => Promise<Readiness> {
  const health = new healthProto.grpc.health.v1.Health('unused: channelOverride', grpc.credentials.createInsecure(), {
    channelOverride: client.getChannel(),
  });
  return async ({ timeoutMs, requestId }) => {
    const { status } = await call<HealthCheckRequest, HealthCheckResponse__Output>(
      health,
      health.Check,
      { service },
      {
        timeoutMs,
        ...(requestId ? { requestId } : {}),
      },
    );
    return status === 'SERVING' ? { ready: true, detail: '' } : { ready: false, detail: `${peer} not ready` };
  };
}
