import * as grpc from '@grpc/grpc-js';
import { SERVER_OPTIONS, vaultService, type VaultHandlers } from '@tessera/protos';

export interface RunningServer {
  server: grpc.Server;
  /** The bound port (useful when listening on port 0). */
  port: number;
}

/** Insecure credentials for now; mTLS between services is a later issue. */
export function startVaultServer(address: string, handlers: VaultHandlers): Promise<RunningServer> {
  const server = new grpc.Server(SERVER_OPTIONS);
  server.addService(vaultService, handlers);
  return new Promise((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => {
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
