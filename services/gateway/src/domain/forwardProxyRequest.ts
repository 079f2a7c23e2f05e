import { isHopByHopHeader } from '@tessera/common';

/**
 * What the forward proxy reads of a client's CONNECT and of the requests in its tunnel, as plain
 * functions (docs/proxies.md): the key in Proxy-Authorization, the target, the headers passed on.
 */

/**
 * The password of `Proxy-Authorization: Basic base64(user:password)` (RFC 7617): the secret key,
 * whatever the user part (clients need one: `http://x:tsk_…@host:port`). Undefined when the header
 * is missing, not Basic or not decodable; authentication then answers api_key_missing.
 */
export function proxyPasswordOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const password = decoded.slice(colon + 1);
  // Clients percent-encode credentials taken from a proxy URL only when they must; a key has no '%'.
  return password === '' ? undefined : password;
}

export interface ConnectTarget {
  /** Lower case, no trailing dot. */
  host: string;
  port: number;
  /** host:port as a URL authority: `psp.test:443`. */
  authority: string;
}

/**
 * A CONNECT's request target (RFC 9110 9.3.6: authority-form, `host:port`), for a DNS name only:
 * outbound routes name hosts, never addresses. Undefined for anything else.
 */
export function connectTargetOf(target: string | undefined): ConnectTarget | undefined {
  const match = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)\.?:(\d{1,5})$/.exec(
    target ?? '',
  );
  if (match === null) return undefined;
  const host = match[1]!.toLowerCase();
  const port = Number(match[2]);
  if (port < 1 || port > 65535 || host.length > 253 || /^[0-9.]+$/.test(host)) return undefined;
  return { host, port, authority: `${host}:${port}` };
}

/**
 * The headers of a tunnelled request passed on to the PSP, in order, repeats kept: without
 * Proxy-* headers (the key is for Tessera only), hop-by-hop headers and those the Connection
 * header names, Host (the proxy sends the URL's) and Content-Length (the proxy frames the body).
 */
export function tunnelRequestHeaders(rawHeaders: readonly string[]): { name: string; value: string }[] {
  const pairs: { name: string; value: string }[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push({ name: rawHeaders[i]!, value: rawHeaders[i + 1]! });
  const listed = new Set<string>();
  for (const { name, value } of pairs) {
    if (name.toLowerCase() !== 'connection') continue;
    for (const token of value.split(',')) if (token.trim() !== '') listed.add(token.trim().toLowerCase());
  }
  return pairs.filter(({ name }) => {
    const lower = name.toLowerCase();
    return !lower.startsWith('proxy-') && !isHopByHopHeader(lower) && !listed.has(lower) && lower !== 'host' && lower !== 'content-length';
  });
}

/** The Host a tunnelled request must name, if it names one: the CONNECT's host, with or without its port. */
export function hostMatchesTarget(hostHeader: string | undefined, target: ConnectTarget): boolean {
  if (hostHeader === undefined) return true;
  const host = hostHeader.toLowerCase().replace(/\.(?=:|$)/, '');
  return host === target.authority || (target.port === 443 && host === target.host);
}
