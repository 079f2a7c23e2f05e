import * as grpc from '@grpc/grpc-js';
import {
  createHealthService,
  healthService,
  PROXY_SERVICE_NAME,
  proxyService,
  restrictCallers,
  serverCredentials,
  serverOptions,
  type HealthService,
  type HealthServiceOptions,
  type ProxyHandlers,
  type ServerTuning,
  type TlsMaterial,
} from '@tessera/protos';

export interface RunningProxyServer {
  server: grpc.Server;
  /** The bound port (useful when listening on port 0). */
  port: number;
  /** grpc.health.v1; shut it down before the server, so open Watch streams end and clients move away. */
  health: HealthService;
}

export interface ProxyServerOptions {
  address: string;
  /** Absent: plaintext, every caller allowed (loopback development only; see serverTlsOrExit). */
  tls: TlsMaterial | undefined;
  /** SAN DNS name of the gateway's client certificate: the only caller (PCI DSS 7.2: least privilege between services). */
  gatewayName: string;
  tuning: ServerTuning;
  health: HealthServiceOptions;
}

/**
 * Binds the proxy's gRPC server. `isReady` backs grpc.health.v1 Check and Watch (SERVING when
 * the vault's own grpc.health.v1 says SERVING): the gateways balance over the replicas that say SERVING.
 */
export function startProxyServer(
  handlers: ProxyHandlers,
  isReady: () => Promise<boolean>,
  options: ProxyServerOptions,
): Promise<RunningProxyServer> {
  const server = new grpc.Server(serverOptions(options.tuning));
  const authenticated = options.tls !== undefined;
  const gatewayOnly = [options.gatewayName];
  const policy: Record<keyof ProxyHandlers & string, string[]> = {
    Forward: gatewayOnly,
    ForwardBatch: gatewayOnly,
    DryRun: gatewayOnly,
  };
  server.addService(proxyService, restrictCallers(handlers, policy, authenticated));
  const health = createHealthService([PROXY_SERVICE_NAME], isReady, options.health);
  server.addService(healthService, restrictCallers(health.handlers, { Check: gatewayOnly, Watch: gatewayOnly }, authenticated));
  return new Promise((resolve, reject) => {
    server.bindAsync(options.address, serverCredentials(options.tls), (err, port) =>
      err ? reject(err) : resolve({ server, port, health }),
    );
  });
}
