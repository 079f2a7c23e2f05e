import * as grpc from '@grpc/grpc-js';
import { restrictCallers, SERVER_OPTIONS, serverCredentials, vaultService, type TlsMaterial, type VaultHandlers } from '@tessera/protos';

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
 * can have card data rendered, both may ask for readiness.
 */
export function vaultCallerPolicy(tls: Pick<VaultServerTls, 'gatewayName' | 'proxyName'>): Record<keyof VaultHandlers & string, string[]> {
  return {
    Tokenize: [tls.gatewayName],
    GetToken: [tls.gatewayName],
    DeleteToken: [tls.gatewayName],
    Render: [tls.proxyName],
    Preview: [tls.proxyName],
    Ready: [tls.gatewayName, tls.proxyName],
  };
}

/** With `tls`: mTLS with client certificates required and every RPC authorized by caller SAN. Without: plaintext. */
export function startVaultServer(address: string, handlers: VaultHandlers, tls?: VaultServerTls): Promise<RunningServer> {
  const server = new grpc.Server(SERVER_OPTIONS);
  server.addService(vaultService, tls === undefined ? handlers : restrictCallers(handlers, vaultCallerPolicy(tls), true));
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
