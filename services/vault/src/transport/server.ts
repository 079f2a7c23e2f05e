import * as grpc from '@grpc/grpc-js';
import {
  createHealthHandlers,
  healthService,
  restrictCallers,
  SERVER_OPTIONS,
  serverCredentials,
  vaultService,
  type HealthCheckHandlers,
  type TlsMaterial,
  type VaultHandlers,
} from '@tessera/protos';

/** The name grpc.health.v1 Check knows besides "" (the whole server). */
export const VAULT_SERVICE_NAME = 'tessera.vault.v1.Vault';

export interface RunningServer {
  server: grpc.Server;
  /** The bound port (useful when listening on port 0). */
  port: number;
}

export interface VaultServerTls {
  material: TlsMaterial;
  /** SAN DNS names of the services' client certificates. */
  gatewayName: string;
  proxyName: string;
}

/**
 * Who may call what (least privilege, PCI DSS 7.2): the gateway manages tokens, only the proxy
 * can have card data rendered, both may ask for readiness. Retaining a browser-made token is token
 * management: the gateway's, on a secret key's request.
 */
export function vaultCallerPolicy(tls: Pick<VaultServerTls, 'gatewayName' | 'proxyName'>): Record<keyof VaultHandlers & string, string[]> {
  return {
    Tokenize: [tls.gatewayName],
    TokenizeBatch: [tls.gatewayName],
    GetToken: [tls.gatewayName],
    DeleteToken: [tls.gatewayName],
    RetainToken: [tls.gatewayName],
    Render: [tls.proxyName],
    RenderBatch: [tls.proxyName],
    Preview: [tls.proxyName],
    Ready: [tls.gatewayName, tls.proxyName],
  };
}

/** grpc.health.v1: both callers may ask (it reveals only SERVING or NOT_SERVING). */
export function vaultHealthCallerPolicy(
  tls: Pick<VaultServerTls, 'gatewayName' | 'proxyName'>,
): Record<keyof HealthCheckHandlers & string, string[]> {
  return { Check: [tls.gatewayName, tls.proxyName] };
}

/**
 * With `tls`: mTLS with client certificates required and every RPC authorized by caller SAN. Without: plaintext.
 * `isReady` backs grpc.health.v1 Check (the same answer as Ready); absent, Check says SERVING while the server runs.
 */
export function startVaultServer(
  address: string,
  handlers: VaultHandlers,
  tls?: VaultServerTls,
  isReady: () => Promise<boolean> = async () => true,
): Promise<RunningServer> {
  const server = new grpc.Server(SERVER_OPTIONS);
  server.addService(vaultService, tls === undefined ? handlers : restrictCallers(handlers, vaultCallerPolicy(tls), true));
  const health = createHealthHandlers([VAULT_SERVICE_NAME], isReady);
  server.addService(healthService, tls === undefined ? health : restrictCallers(health, vaultHealthCallerPolicy(tls), true));
  return new Promise((resolve, reject) => {
    server.bindAsync(address, serverCredentials(tls?.material), (err, port) => {
      if (err) reject(err);
      else resolve({ server, port });
    });
  });
}

/** Lets in-flight calls finish, but not forever. */
export function shutdownServer(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
