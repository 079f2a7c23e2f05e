import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { buildConnector } from 'undici';
import type { ConnectPolicy } from '../domain/destinationPolicy';
import type { AddressPins } from './addressPins';
import { resolveHost, type ResolvedAddress, type Resolver } from './resolver';

export interface SafeConnectorOptions {
  /** The destination policy's connect-time rules; the connector has none of its own. */
  policy: ConnectPolicy;
  resolve: Resolver;
  /** The pre-flight's answers for hosts with requests in flight (see addressPins.ts). */
  pins?: AddressPins;
  connectTimeoutMs: number;
  /** Extra TLS settings (a test CA, for instance). servername always stays the URL's host. */
  tls?: Pick<ConnectionOptions, 'ca' | 'rejectUnauthorized'>;
  /** Replaces undici's own connector underneath the checks; only tests need this. */
  baseConnector?: buildConnector.connector;
}

function pickFamily(addresses: readonly ResolvedAddress[], family: LookupOptions['family']): ResolvedAddress[] {
  const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
  return wanted === 0 ? [...addresses] : addresses.filter((a) => a.family === wanted);
}

/**
 * A `lookup` for net/tls.connect that hands out only addresses the policy passes, judged here at
 * connect time whatever their source: the pre-flight's pinned answer when a request holds one
 * (so the socket goes where the pre-flight checked, not wherever DNS points by now), otherwise a
 * fresh lookup (a connection undici opens after its request was given up, for instance).
 */
export function createSafeLookup(policy: ConnectPolicy, resolve: Resolver, pins?: AddressPins): LookupFunction {
  return (hostname, options, callback) => {
    const pinned = pins?.get(hostname);
    (pinned !== undefined ? Promise.resolve(pinned) : resolveHost(hostname, resolve)).then(
      (addresses) => {
        let usable: ResolvedAddress[];
        try {
          policy.checkAddresses(
            addresses.map((a) => a.address),
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
 * undici connector that only ever hands out sockets to addresses and ports the policy allows:
 * - the port is judged before connecting;
 * - an IP-literal host is judged before connecting (net.connect skips `lookup` for literals);
 * - a named host goes through the safe lookup above (pinned answer, else a fresh one);
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
      lookup: createSafeLookup(opts.policy, opts.resolve, opts.pins),
      ...(opts.tls ?? {}),
    });
  return (options, callback) => {
    try {
      // The same port rule as the URL decision, again here where the socket is made.
      const port = options.port === undefined || options.port === '' ? (options.protocol === 'https:' ? 443 : 80) : Number(options.port);
      opts.policy.checkPort(port);
      if (isIP(options.hostname) !== 0) opts.policy.checkAddresses([options.hostname], true);
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
        opts.policy.checkAddresses(remote === undefined ? [] : [remote], isIP(options.hostname) !== 0);
      } catch (refusal) {
        socket.destroy();
        callback(refusal as Error, null);
        return;
      }
      callback(null, socket);
    });
  };
}
