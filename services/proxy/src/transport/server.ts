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
  /** SAN DNS name of the gateway's client certificate: the only caller of Forward, ForwardBatch, DryRun and DeliverWebhook (PCI DSS 7.2: least privilege between services). */
  gatewayName: string;
  /** TLS_PEER_FIELDS: the fields service's, which may make CallCompletion only (and ask readiness). */
  fieldsName: string;
  /** TLS_PEER_INBOUND: the inbound service's (ADR 0013), which may make ForwardUpstream only (and ask readiness); unset: nobody may. */
  inboundName?: string | undefined;
  tuning: ServerTuning;
  health: HealthServiceOptions;
}

/**
 * Who may call what (least privilege, PCI DSS 7.2): the gateway proxies PSP calls with card data;
 * the fields service, facing shoppers' browsers, may only call a merchant's completion endpoint,
 * which never involves the vault. Neither may make the other's calls. Webhook deliveries come from
 * the gateway's dispatcher, so they are the gateway's. The inbound service (ADR 0013), which holds
 * raw card numbers for an instant and has no egress, may only send a route's rewritten request to
 * the merchant's upstream; without TLS_PEER_INBOUND nobody may.
 */
export function proxyCallerPolicy(
  names: Pick<ProxyServerOptions, 'gatewayName' | 'fieldsName' | 'inboundName'>,
): Record<keyof ProxyHandlers & string, string[]> {
  const gatewayOnly = [names.gatewayName];
  return {
    Forward: gatewayOnly,
    ForwardBatch: gatewayOnly,
    DryRun: gatewayOnly,
    DeliverWebhook: gatewayOnly,
    ForwardRoute: gatewayOnly,
    CallCompletion: [names.fieldsName],
    ForwardUpstream: names.inboundName === undefined ? [] : [names.inboundName],
  };
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
  server.addService(proxyService, restrictCallers(handlers, proxyCallerPolicy(options), authenticated));
  const health = createHealthService([PROXY_SERVICE_NAME], isReady, options.health);
  const callers = [options.gatewayName, options.fieldsName, ...(options.inboundName === undefined ? [] : [options.inboundName])];
  server.addService(healthService, restrictCallers(health.handlers, { Check: callers, Watch: callers }, authenticated));
  return new Promise((resolve, reject) => {
    server.bindAsync(options.address, serverCredentials(options.tls), (err, port) =>
      err ? reject(err) : resolve({ server, port, health }),
    );
  });
}
