import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Listener } from '@tessera/common';
import { installDrain } from './drain';

export interface OwnListener extends Listener {
  /** Starts listening; resolves with the base URL actually bound (port 0 becomes the OS's pick). */
  listen(): Promise<string>;
}

/** The listener of a part this gateway does not serve on a port of its own: nothing to drain or cut. */
export const NO_OWN_LISTENER: Listener = { drain: async () => undefined, cut: () => undefined };

/**
 * A listener of its own for a part of the gateway kept off the API's port (the admin dashboard,
 * the card fields), so each can be bound to its own address. The app is made when listen() runs.
 * It drains like the API's port (drain.ts): a shopper's card submission in flight when the gateway
 * is told to stop is answered, not cut; runService cuts what is still open at its deadline.
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
    drain: () => new Promise<void>((resolve) => (drain ? drain.drain(resolve) : resolve())),
    cut: () => server?.closeAllConnections(),
  };
}
