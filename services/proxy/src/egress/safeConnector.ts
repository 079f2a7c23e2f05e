import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { buildConnector } from 'undici';
import { assertAddressesAllowed, assertPortAllowed } from '../domain/destinationUrl';
import type { Cidr } from '../domain/addressPolicy';
import type { PortRange } from '../domain/portPolicy';
import { resolveHost, type ResolvedAddress, type Resolver } from './resolver';

export interface SafeConnectorOptions {
  allowlist: readonly Cidr[];
  /** Ports allowed besides 443 and 80; absent: those two only. */
  allowedPorts?: readonly PortRange[];
  resolve: Resolver;
  connectTimeoutMs: number;
  /** Extra TLS settings (a test CA, for instance). servername always stays the URL's host. */
  tls?: Pick<ConnectionOptions, 'ca' | 'rejectUnauthorized'>;
  /** Replaces undici's own connector underneath the checks; only tests need this. */
  baseConnector?: buildConnector.connector;
}

function pickFamily(addresses: ResolvedAddress[], family: LookupOptions['family']): ResolvedAddress[] {
  const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
  return wanted === 0 ? addresses : addresses.filter((a) => a.family === wanted);
}

/**
 * A `lookup` for net/tls.connect that resolves the host again at connect time and refuses the
 * connection unless every answer passes the address policy. Checking only before the request
 * would leave a window for DNS rebinding: a second answer pointing at an internal address.
 */
export function createSafeLookup(allowlist: readonly Cidr[], resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolveHost(hostname, resolve).then(
      (addresses) => {
        let usable: ResolvedAddress[];
        try {
          assertAddressesAllowed(
            addresses.map((a) => a.address),
            allowlist,
            false,
          );
          usable = pickFamily(addresses, options.family);
          if (usable.length === 0) throw Object.assign(new Error('no address of the requested family'), { code: 'ENOTFOUND' });
        } catch (err) {
          callback(err as NodeJS.ErrnoException, '', 0);
          return;
        }
        const first = usable[0] as ResolvedAddress;
        if (options.all) callback(null, usable satisfies LookupAddress[]);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * undici connector that only ever hands out sockets to allowed addresses and ports:
 * - the port must be 443, 80 or in PSP_ALLOWED_PORTS;
 * - an IP-literal host is judged before connecting (net.connect skips `lookup` for literals);
 * - a named host goes through the safe lookup above;
 * - after connecting, the socket's actual peer address is judged once more, so nothing that
 *   bypasses `lookup` (a literal, a future Node change) can slip through.
 * A refusal is the TesseraError psp_destination_forbidden itself; undici passes connector
 * errors to the waiting request unchanged, so the caller sees the typed error.
 */
export function createSafeConnector(opts: SafeConnectorOptions): buildConnector.connector {
  const connect =
    opts.baseConnector ??
    buildConnector({
      timeout: opts.connectTimeoutMs,
      lookup: createSafeLookup(opts.allowlist, opts.resolve),
      ...(opts.tls ?? {}),
    });
  return (options, callback) => {
    try {
      // The same port rule as the pre-flight check, again here where the socket is made.
      const port = options.port === undefined || options.port === '' ? (options.protocol === 'https:' ? 443 : 80) : Number(options.port);
      assertPortAllowed(port, opts.allowedPorts ?? []);
      if (isIP(options.hostname) !== 0) assertAddressesAllowed([options.hostname], opts.allowlist, true);
    } catch (err) {
      callback(err as Error, null);
      return;
    }
    connect(options, (err, socket) => {
      if (err !== null) {
        callback(err, null);
        return;
      }
      try {
        const remote = socket.remoteAddress;
        assertAddressesAllowed(remote === undefined ? [] : [remote], opts.allowlist, isIP(options.hostname) !== 0);
      } catch (refusal) {
        socket.destroy();
        callback(refusal as Error, null);
        return;
      }
      callback(null, socket);
    });
  };
}
