import { isIPv4, isIPv6 } from 'node:net';
import { z } from 'zod';

const PORT = /^\d{1,5}$/;

/** `host:port` or `[v6]:port` with a port in range; undefined when it is not one. */
function hostAndPort(text: string): { host: string; port: number } | undefined {
  const match = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(text) ?? /^([^\s:/[\]]+):(\d+)$/.exec(text);
  if (match === null || !PORT.test(match[2] ?? '')) return undefined;
  const port = Number(match[2]);
  return port > 65535 ? undefined : { host: match[1] as string, port };
}

/**
 * Why `target` is not a gRPC target the services dial, or undefined when it is one. Accepted:
 * `host:port` and `dns:///host:port` (every address DNS returns: a headless Service, compose's
 * service name), `ipv4:a.b.c.d:port,...` and `ipv6:[addr]:port,...` (a fixed list). Calls are
 * balanced round_robin over all of them. A port is always required (gRPC's default is 443).
 */
export function grpcTargetProblem(target: string): string | undefined {
  const list = (scheme: 'ipv4' | 'ipv6', rest: string): string | undefined => {
    const entries = rest.split(',');
    for (const entry of entries) {
      const parsed = hostAndPort(entry.trim());
      const ok = parsed !== undefined && (scheme === 'ipv4' ? isIPv4(parsed.host) : isIPv6(parsed.host) && entry.trim().startsWith('['));
      if (!ok) return `"${entry}" is not an ${scheme === 'ipv4' ? 'IPv4 address:port' : '[IPv6 address]:port'}`;
    }
    return undefined;
  };
  if (target.startsWith('ipv4:')) return list('ipv4', target.slice('ipv4:'.length));
  if (target.startsWith('ipv6:')) return list('ipv6', target.slice('ipv6:'.length));
  if (target.startsWith('dns:')) {
    const rest = target.startsWith('dns:///') ? target.slice('dns:///'.length) : undefined;
    if (rest === undefined) return 'a DNS target is dns:///host:port (no resolver authority)';
    return hostAndPort(rest) === undefined ? 'dns:/// must be followed by host:port' : undefined;
  }
  return hostAndPort(target) === undefined ? 'must be host:port, dns:///host:port, or ipv4:/ipv6: followed by address:port,...' : undefined;
}

export const grpcTarget = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .superRefine((value, ctx) => {
      const problem = grpcTargetProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    });

/**
 * Keepalive of a service's gRPC clients. It must not be below the servers' GRPC_MIN_PING_INTERVAL_MS,
 * or servers that enforce it answer GOAWAY too_many_pings (see docs/scaling.md).
 */
export const grpcClientEnvShape = {
  GRPC_KEEPALIVE_TIME_MS: z.coerce.number().int().min(1000).default(30_000),
  GRPC_KEEPALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  // A hung replica is out of the rotation within interval + timeout (1.5 s), not after keepalive's 40 s.
  GRPC_LIVENESS_INTERVAL_MS: z.coerce.number().int().positive().default(500),
  // Above the servers' HEALTH_CHECK_TIMEOUT_MS (500), the longest a live server takes to answer a Check.
  GRPC_LIVENESS_TIMEOUT_MS: z.coerce.number().int().positive().default(1000),
};

/** Connection age and keepalive policy of a gRPC server, and how fast its health follows its store. */
export const grpcServerEnvShape = {
  GRPC_MIN_PING_INTERVAL_MS: z.coerce.number().int().positive().default(10_000),
  // Clients re-resolve when a connection is closed: this bounds how long a new replica waits for traffic.
  GRPC_MAX_CONNECTION_AGE_MS: z.coerce.number().int().positive().default(300_000),
  // Calls in flight on a closing connection: above the longest call (a proxy call, 40 s by default).
  GRPC_MAX_CONNECTION_AGE_GRACE_MS: z.coerce.number().int().positive().default(60_000),
  HEALTH_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(500),
  HEALTH_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(500),
};

export interface GrpcClientEnv {
  GRPC_KEEPALIVE_TIME_MS: number;
  GRPC_KEEPALIVE_TIMEOUT_MS: number;
  GRPC_LIVENESS_INTERVAL_MS: number;
  GRPC_LIVENESS_TIMEOUT_MS: number;
}

export interface GrpcServerEnv {
  GRPC_MIN_PING_INTERVAL_MS: number;
  GRPC_MAX_CONNECTION_AGE_MS: number;
  GRPC_MAX_CONNECTION_AGE_GRACE_MS: number;
  HEALTH_POLL_INTERVAL_MS: number;
  HEALTH_CHECK_TIMEOUT_MS: number;
}

/** In the shapes @tessera/protos' clientChannelOptions/serverOptions/createHealthService take. */
export function grpcClientTuning(config: GrpcClientEnv): {
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  livenessIntervalMs: number;
  livenessTimeoutMs: number;
} {
  return {
    keepaliveTimeMs: config.GRPC_KEEPALIVE_TIME_MS,
    keepaliveTimeoutMs: config.GRPC_KEEPALIVE_TIMEOUT_MS,
    livenessIntervalMs: config.GRPC_LIVENESS_INTERVAL_MS,
    livenessTimeoutMs: config.GRPC_LIVENESS_TIMEOUT_MS,
  };
}

export function grpcServerTuning(config: GrpcServerEnv): {
  minPingIntervalMs: number;
  maxConnectionAgeMs: number;
  maxConnectionAgeGraceMs: number;
} {
  return {
    minPingIntervalMs: config.GRPC_MIN_PING_INTERVAL_MS,
    maxConnectionAgeMs: config.GRPC_MAX_CONNECTION_AGE_MS,
    maxConnectionAgeGraceMs: config.GRPC_MAX_CONNECTION_AGE_GRACE_MS,
  };
}

export function healthServiceOptions(config: GrpcServerEnv): { pollIntervalMs: number; checkTimeoutMs: number } {
  return { pollIntervalMs: config.HEALTH_POLL_INTERVAL_MS, checkTimeoutMs: config.HEALTH_CHECK_TIMEOUT_MS };
}
