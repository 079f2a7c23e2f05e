import { Resolver as DnsResolver } from 'node:dns/promises';
import { isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Turns a host name into every address it resolves to. Injected so tests can simulate DNS
 * answers (including rebinding) without a DNS server.
 */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface DnsOptions {
  /** Milliseconds c-ares waits for a server's answer on the first try (PSP_DNS_TIMEOUT_MS). */
  timeoutMs: number;
  /** Tries per name server before giving up (PSP_DNS_TRIES). */
  tries: number;
  /** Name servers (`ip` or `ip:port`); absent: those of /etc/resolv.conf. Tests point this at a fake. */
  servers?: string[];
}

export const DEFAULT_DNS_OPTIONS: DnsOptions = { timeoutMs: 1000, tries: 2 };

/** RFC 6761: `localhost` and names under it are loopback; answered here, never asked of DNS. */
const LOCALHOST: readonly ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }];

function isLocalhost(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * PSP host names through c-ares (dns.promises.Resolver), bounded by `timeoutMs` and `tries`.
 * Not dns.lookup: getaddrinfo blocks one of libuv's four pool threads per lookup (shared with fs
 * and crypto), so a slow or silent DNS server could stall the whole proxy. c-ares runs on the
 * event loop. It does not read /etc/hosts: `localhost` (and `*.localhost`) is 127.0.0.1 here,
 * any other name must be in DNS.
 */
export function createDnsResolver(opts: DnsOptions = DEFAULT_DNS_OPTIONS): Resolver {
  const dns = new DnsResolver({ timeout: opts.timeoutMs, tries: opts.tries });
  if (opts.servers !== undefined) dns.setServers(opts.servers);
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (isLocalhost(name)) return [...LOCALHOST];
    const [v4, v6] = await Promise.allSettled([dns.resolve4(name), dns.resolve6(name)]);
    const addresses: ResolvedAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (addresses.length > 0) return addresses;
    // Neither family answered: the IPv4 failure (ENOTFOUND, ETIMEOUT, ...) says why.
    throw v4.status === 'rejected' ? v4.reason : Object.assign(new Error(`no address for ${name}`), { code: 'ENOTFOUND' });
  };
}

/** An IP literal "resolves" to itself; anything else goes to the resolver. */
export async function resolveHost(hostname: string, resolve: Resolver): Promise<ResolvedAddress[]> {
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family: family === 6 ? 6 : 4 }];
  return resolve(hostname);
}
