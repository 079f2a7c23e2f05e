import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OwnListener {
  /** Starts listening; resolves with the base URL actually bound (port 0 becomes the OS's pick). */
  listen(): Promise<string>;
  /** Closes the listener and every connection on it, idle keep-alive ones included. */
  close(): Promise<void>;
}

/**
 * A listener of its own for a part of the gateway kept off the API's port (the admin dashboard,
 * the card fields), so each can be bound to its own address. The app is made when listen() runs.
 */
export function ownListener(app: () => http.RequestListener, port: number, host: string): OwnListener {
  let server: http.Server | undefined;
  return {
    async listen() {
      const started = http.createServer(app());
      server = started;
      await new Promise<void>((resolve, reject) => {
        started.once('error', reject);
        started.listen(port, host, () => resolve());
      });
      const address = started.address() as AddressInfo;
      const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${hostName}:${address.port}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
