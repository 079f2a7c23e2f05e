import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { installDrain } from './drain';

export interface OwnListener {
  /** Starts listening; resolves with the base URL actually bound (port 0 becomes the OS's pick). */
  listen(): Promise<string>;
  /**
   * Stops accepting connections and answers every request already read, as the API's port does
   * (drain.ts); resolves once the last connection is gone, or at `deadlineMs`, when the ones
   * still open are cut.
   */
  close(deadlineMs?: number): Promise<void>;
}

/** Long enough for an idle keep-alive connection to time out and for a card submission to finish. */
const DEFAULT_CLOSE_DEADLINE_MS = 15_000;

/**
 * A listener of its own for a part of the gateway kept off the API's port (the admin dashboard,
 * the card fields), so each can be bound to its own address. The app is made when listen() runs.
 * It drains like the API's port: a shopper's card submission in flight when the gateway is told
 * to stop is answered, not cut.
 */
export function ownListener(app: () => http.RequestListener, port: number, host: string): OwnListener {
  let server: http.Server | undefined;
  let drain: ReturnType<typeof installDrain> | undefined;
  return {
    async listen() {
      const started = http.createServer(app());
      server = started;
      drain = installDrain(started);
      await new Promise<void>((resolve, reject) => {
        started.once('error', reject);
        started.listen(port, host, () => resolve());
      });
      const address = started.address() as AddressInfo;
      const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${hostName}:${address.port}`;
    },
    close: (deadlineMs = DEFAULT_CLOSE_DEADLINE_MS) =>
      new Promise<void>((resolve) => {
        if (!server || !drain) return resolve();
        const draining = server;
        const force = setTimeout(() => draining.closeAllConnections(), deadlineMs);
        force.unref();
        drain.drain(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
