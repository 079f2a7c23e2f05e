import { TesseraError } from '@tessera/common';

/**
 * The hosts of the outbound route the gateway sent with a ForwardRoute call: the allowlist the
 * destination policy applies to the request's URL. Only this member is read here; the vault
 * validates the whole document (packages/routes) when it renders. A route without hosts would be
 * an empty allowlist, which means "any host" to the policy, so it is refused instead.
 */
export function outboundHostsOf(routeJson: string): string[] {
  let hosts: unknown;
  try {
    hosts = (JSON.parse(routeJson) as { outbound?: { hosts?: unknown } } | null)?.outbound?.hosts;
  } catch {
    hosts = undefined;
  }
  if (!Array.isArray(hosts) || hosts.length === 0 || !hosts.every((h): h is string => typeof h === 'string' && h !== '')) {
    throw new TesseraError('invalid_request', { message: 'The route names no outbound hosts.' });
  }
  return hosts.map((h) => h.toLowerCase());
}
