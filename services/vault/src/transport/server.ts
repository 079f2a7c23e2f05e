import * as grpc from '@grpc/grpc-js';
import {
  createHealthService,
  healthService,
  restrictCallers,
  serverCredentials,
  serverOptions,
  vaultService,
  VAULT_SERVICE_NAME,
  type HealthCheckHandlers,
  type HealthService,
  type HealthServiceOptions,
  type ServerTuning,
  type TlsMaterial,
  type VaultHandlers,
} from '@tessera/protos';
import { deliveryInterceptor } from './delivery';

/** The name grpc.health.v1 knows besides "" (the whole server), and the one the clients watch. */
export { VAULT_SERVICE_NAME };

export interface RunningServer {
  server: grpc.Server;
  /** The bound port (useful when listening on port 0). */
  port: number;
  /** grpc.health.v1; shut it down before the server, so open Watch streams end and clients move away. */
  health: HealthService;
}

export interface VaultServerTls {
  material: TlsMaterial;
  /** SAN DNS names of the services' client certificates. */
  gatewayName: string;
  proxyName: string;
  /** The fields service's (TLS_PEER_FIELDS); absent, no caller gets its rights. */
  fieldsName?: string | undefined;
  /** The inbound routes service's (TLS_PEER_INBOUND); absent, no caller gets its rights. */
  inboundName?: string | undefined;
}

type CallerNames = Pick<VaultServerTls, 'gatewayName' | 'proxyName' | 'fieldsName' | 'inboundName'>;

/** The fields identity's name, when one is configured (none: no one gets its rights). */
const fieldsOf = (tls: CallerNames): string[] => (tls.fieldsName === undefined ? [] : [tls.fieldsName]);
/** The inbound identity's name, likewise. */
const inboundOf = (tls: CallerNames): string[] => (tls.inboundName === undefined ? [] : [tls.inboundName]);

/**
 * Who may call what (least privilege, PCI DSS 7.2): the gateway manages tokens, only the proxy
 * can have card data rendered, all may ask for readiness (grpc.health.v1, below). Retaining a browser-made token is token
 * management: the gateway's, on a secret key's request. The fields service, facing the shoppers'
 * browsers, may only Tokenize and AttachCvv, and within them only what a browser may do
 * (provisional tokens, a CVC under a grant: app/callers.ts, app/cvcGrants.ts). The inbound routes
 * service may only Tokenize (durable tokens, never dedupe: app/callers.ts).
 */
export function vaultCallerPolicy(tls: CallerNames): Record<keyof VaultHandlers & string, string[]> {
  return {
    Tokenize: [tls.gatewayName, ...fieldsOf(tls), ...inboundOf(tls)],
    TokenizeBatch: [tls.gatewayName],
    GetToken: [tls.gatewayName],
    DeleteToken: [tls.gatewayName],
    RetainToken: [tls.gatewayName],
    Render: [tls.proxyName],
    RenderBatch: [tls.proxyName],
    Preview: [tls.proxyName],
    UpdateToken: [tls.gatewayName],
    AttachCvv: [tls.gatewayName, ...fieldsOf(tls)],
    RenderRoute: [tls.proxyName],
    IssueHostCertificate: [tls.gatewayName],
    GetCaCertificate: [tls.gatewayName],
  };
}

/** grpc.health.v1: every caller may ask and watch (it reveals only SERVING or NOT_SERVING). */
export function vaultHealthCallerPolicy(tls: CallerNames): Record<keyof HealthCheckHandlers & string, string[]> {
  const callers = [tls.gatewayName, tls.proxyName, ...fieldsOf(tls), ...inboundOf(tls)];
  return { Check: callers, Watch: callers };
}

export interface VaultServerOptions {
  /** Keepalive and connection age (GRPC_* in config); the defaults otherwise. */
  tuning?: ServerTuning;
  health?: HealthServiceOptions;
}

/**
 * With `tls`: mTLS with client certificates required and every RPC authorized by caller SAN. Without: plaintext.
 * `isReady` backs grpc.health.v1 Check and Watch (the vault's only readiness answer); absent, they say SERVING while the
 * server runs. Clients balance over the replicas whose Watch says SERVING, so a vault that cannot reach its store
 * stops getting calls.
 */
export function startVaultServer(
  address: string,
  handlers: VaultHandlers,
  tls?: VaultServerTls,
  isReady: () => Promise<boolean> = async () => true,
  options: VaultServerOptions = {},
): Promise<RunningServer> {
  const server = new grpc.Server({ ...serverOptions(options.tuning), interceptors: [deliveryInterceptor] });
  server.addService(vaultService, tls === undefined ? handlers : restrictCallers(handlers, vaultCallerPolicy(tls), true));
  const health = createHealthService([VAULT_SERVICE_NAME], isReady, options.health);
  server.addService(
    healthService,
    tls === undefined ? health.handlers : restrictCallers(health.handlers, vaultHealthCallerPolicy(tls), true),
  );
  return new Promise((resolve, reject) => {
    server.bindAsync(address, serverCredentials(tls?.material), (err, port) => {
      if (err) reject(err);
      else resolve({ server, port, health });
    });
  });
}
