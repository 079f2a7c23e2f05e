import { isIP } from 'node:net';
import { maskCardNumbers, TesseraError } from '@tessera/common';
import { judgeAddresses, type Cidr } from './addressPolicy';
import { isPortAllowed, portOfUrl, STANDARD_PSP_PORTS, type PortRange } from './portPolicy';

/** "test" keys may reach plain http (sandboxes); anything else is treated as live, the stricter rule. */
export type Mode = 'test' | 'live';

export function parseMode(mode: string): Mode {
  return mode === 'test' ? 'test' : 'live';
}

export interface Destination {
  url: URL;
  /** The host as DNS or a socket wants it: IPv6 brackets removed. */
  hostname: string;
  /** True when the URL names an IP address, so no DNS lookup is involved. */
  isIpLiteral: boolean;
  /** host[:port], safe to log (no path, no query; a card number in the host name masked). */
  logHost: string;
}

function forbidden(message: string): TesseraError {
  return new TesseraError('psp_destination_forbidden', { param: 'pspUrl', message });
}

/**
 * The URL half of the destination policy, before any DNS. The WHATWG parser already turns
 * IPv4 tricks (2130706433, 0x7f.1, 0177.0.0.1) into dotted quads for http(s) URLs, so the
 * address check that follows sees the real target.
 */
export function checkDestinationUrl(raw: string, mode: Mode): Destination {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TesseraError('parameter_invalid', { param: 'pspUrl', message: 'pspUrl must be an absolute http or https URL.' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw forbidden('pspUrl must use the http or https scheme.');
  }
  if (mode === 'live' && url.protocol !== 'https:') {
    throw forbidden('Live API keys may only send to https PSP URLs.');
  }
  // Credentials in the URL would be sent as Basic auth and logged by intermediaries; PSP
  // credentials belong in pspHeaders.
  if (url.username !== '' || url.password !== '') {
    throw forbidden('pspUrl must not contain a user name or password; send credentials in pspHeaders.');
  }
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === '') throw forbidden('pspUrl has no host.');
  return { url, hostname, isIpLiteral: isIP(hostname) !== 0, logHost: maskCardNumbers(url.host) };
}

/**
 * The address half of the policy: refuses with a message saying which kind of address was
 * found, never echoing the address or host itself.
 */
export function assertAddressesAllowed(addresses: readonly string[], allowlist: readonly Cidr[], isIpLiteral: boolean): void {
  const verdict = judgeAddresses(addresses, allowlist);
  if (verdict.allowed) return;
  throw forbidden(isIpLiteral ? `pspUrl points to ${verdict.description}.` : `The pspUrl host resolves to ${verdict.description}.`);
}

/** The port half of the policy (see portPolicy.ts): checked before any DNS lookup or connection. */
export function assertPortAllowed(port: number, extra: readonly PortRange[]): void {
  if (isPortAllowed(port, extra)) return;
  const allowed = [...STANDARD_PSP_PORTS, ...extra.map((r) => (r.from === r.to ? `${r.from}` : `${r.from}-${r.to}`))].join(', ');
  throw forbidden(`pspUrl uses port ${port}; PSPs are reached only on ports ${allowed}.`);
}

export function assertUrlPortAllowed(url: URL, extra: readonly PortRange[]): void {
  assertPortAllowed(portOfUrl(url), extra);
}
