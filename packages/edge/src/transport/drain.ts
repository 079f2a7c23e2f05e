import type http from 'node:http';
import net from 'node:net';
import type { Listener } from '@tessera/common';

export interface Drain {
  /** True once drain() was called. */
  readonly draining: boolean;
  /**
   * Stops accepting connections and lets the open ones finish; `closed` runs once the last
   * connection is gone. Called more than once, it does nothing more.
   */
  drain(closed: () => void): void;
}

/** How long an idle keep-alive connection stays open (Node's default, set explicitly: the drain depends on it). */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

/**
 * How long a drain can legitimately last: a request may still arrive on a keep-alive connection
 * until that connection's idle timeout, and it may then wait for a whole proxy call. Connections
 * still open after this are cut.
 */
export function drainDeadlineMs(proxyTimeoutMs: number): number {
  return KEEP_ALIVE_TIMEOUT_MS + proxyTimeoutMs + 1000;
}

/**
 * Graceful shutdown of the public HTTP server, installed before it serves anything.
 *
 * Once drain() starts, every response not yet begun carries `Connection: close`, so Node closes
 * each connection as soon as its answer is out and a keep-alive client opens no further request
 * on it (it finds the port closed instead). A connection that is idle at that moment is left to
 * its keep-alive timeout, which clients are told (`Keep-Alive: timeout=5`) and close before; a
 * request that still arrives on it is read and answered, with `Connection: close`.
 *
 * What it avoids: http.Server#close() (and closeIdleConnections()) destroys every connection
 * that has no request in progress at that instant, including one whose client has just written a
 * request the server has not parsed yet: that client gets ECONNRESET for a request it sent.
 */
export function installDrain(server: http.Server): Drain {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  let draining = false;
  const unanswered = new Set<http.ServerResponse>();
  const forget = function (this: http.ServerResponse): void {
    unanswered.delete(this);
  };
  // Before the app's own listener, so even an answer written synchronously is covered.
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (draining) {
      res.setHeader('connection', 'close');
      return;
    }
    unanswered.add(res);
    res.once('close', forget);
  });
  return {
    get draining() {
      return draining;
    },
    drain(closed) {
      if (draining) return;
      draining = true;
      for (const res of unanswered) if (!res.headersSent) res.setHeader('connection', 'close');
      unanswered.clear();
      // net.Server's close, not http.Server's: stop listening without the idle-connection sweep.
      net.Server.prototype.close.call(server, () => closed());
    },
  };
}

/**
 * The public server as runService drains it: drain() above; at the grace deadline
 * (drainDeadlineMs) every connection still open is cut.
 */
export function drainingListener(server: http.Server, drain: Drain): Listener {
  return {
    drain: () => new Promise<void>((resolve) => drain.drain(resolve)),
    cut: () => server.closeAllConnections(),
  };
}
