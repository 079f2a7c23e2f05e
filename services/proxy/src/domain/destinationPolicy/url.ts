import { isIP } from 'node:net';
import { maskCardNumbers, TesseraError } from '@tessera/common';
import { forbidden } from './forbidden';

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

/**
 * The URL rules, before any DNS. The WHATWG parser already turns IPv4 tricks (2130706433,
 * 0x7f.1, 0177.0.0.1) into dotted quads for http(s) URLs, so the address rules see the real target.
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
  return { url, hostname, isIpLiteral: isIP(hostname) !== 0, logHost: logHostOfUrl(url) };
}

function logHostOfUrl(url: URL): string {
  return maskCardNumbers(url.host);
}

/** The log form of a pspUrl's host[:port] (see Destination.logHost), for a URL the policy refused; undefined when it does not parse. */
export function logHostOf(raw: string): string | undefined {
  try {
    return logHostOfUrl(new URL(raw));
  } catch {
    return undefined;
  }
}
