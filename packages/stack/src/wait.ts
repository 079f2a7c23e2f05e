import net from 'node:net';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it is true; a check that throws ends the wait with its error. */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** True once something accepts TCP connections on the loopback port. */
export function tcpOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** True once `url` answers 200 (e.g. the gateway's /readyz: its vault and proxy are reachable too). */
export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url).catch(() => undefined);
  if (res === undefined) return false;
  await res.body?.cancel();
  return res.status === 200;
}

/**
 * Ports for the processes a launcher starts come from a block below the kernel's ephemeral range
 * (32768-60999 here). An OS-chosen free port (listen on 0) is an ephemeral port: between the
 * probe closing it and the service binding it, any outgoing connection of the machine may take it
 * as its local port (EADDRINUSE, seen under load). Each user of the machine's ports (a Jest
 * worker, the bench) takes a block of its own, so they never hand out the same port.
 */
export class PortBlock {
  // From a random place in the block: test runs of several checkouts on one machine share the
  // blocks, and all starting at the first port they would keep taking each other's ports.
  private next: number;

  constructor(
    readonly base: number,
    readonly size = 1000,
  ) {
    this.next = Math.floor(Math.random() * size);
  }

  async freePort(host = '127.0.0.1'): Promise<number> {
    for (let tried = 0; tried < this.size; tried++) {
      const port = this.base + (this.next++ % this.size);
      if (await bindsOn(port, host)) return port;
    }
    throw new Error(`no free port in ${this.base}-${this.base + this.size - 1}`);
  }
}

function bindsOn(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}
