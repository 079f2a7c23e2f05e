import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as HealthProto } from './generated/health';
import type { HealthClient, HealthHandlers } from './generated/grpc/health/v1/Health';
import type { HealthCheckResponse__Output } from './generated/grpc/health/v1/HealthCheckResponse';

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

/**
 * Check only. Watch is left to grpc-js, which answers UNIMPLEMENTED for a method without a
 * handler: the spec allows it, probes use Check, and a long-lived stream per prober would be one
 * more thing for the caller-certificate guard (unary only) to cover.
 */
export type HealthCheckHandlers = Pick<HealthHandlers, 'Check'>;

/**
 * `Check` for a server whose services are `services` (full names, e.g. `tessera.vault.v1.Vault`).
 * The empty name means the server as a whole (the spec's convention); both answer what `isReady`
 * says, SERVING or NOT_SERVING. An unknown name is NOT_FOUND, as the spec requires. A failing or
 * slow readiness check reads as NOT_SERVING, never as an error the prober could misread.
 */
export function createHealthHandlers(services: readonly string[], isReady: () => Promise<boolean>): HealthCheckHandlers {
  const known = new Set(['', ...services]);
  return {
    Check(call, callback) {
      const service = call.request.service;
      if (!known.has(service)) {
        callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
        return;
      }
      isReady().then(
        (ready) => callback(null, { status: ready ? 'SERVING' : 'NOT_SERVING' }),
        () => callback(null, { status: 'NOT_SERVING' }),
      );
    },
  };
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
