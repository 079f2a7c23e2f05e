import { promises as dns } from 'node:dns';
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

/** The operating system's resolver (getaddrinfo), which honours /etc/hosts like any client. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** An IP literal "resolves" to itself; anything else goes to the resolver. */
export async function resolveHost(hostname: string, resolve: Resolver): Promise<ResolvedAddress[]> {
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family: family === 6 ? 6 : 4 }];
  return resolve(hostname);
}
