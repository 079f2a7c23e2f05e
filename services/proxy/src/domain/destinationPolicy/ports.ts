import { forbidden } from './forbidden';

/**
 * Which TCP ports the proxy may send to. PSP APIs live on 443 (and 80 for test sandboxes); any
 * other port on a public host is far more likely a merchant-supplied URL probing something that
 * is not a PSP (SMTP, databases, admin consoles) than a payment API. PSP_ALLOWED_PORTS adds
 * exceptions, as single ports or ranges.
 */
export const STANDARD_PSP_PORTS: readonly number[] = [443, 80];

export interface PortRange {
  from: number;
  to: number;
}

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** Parses PSP_ALLOWED_PORTS entries (`8443`, `8000-8099`); throws naming the first bad entry. */
export function parsePortList(entries: readonly string[]): PortRange[] {
  return entries.map((entry) => {
    const [first, last, ...rest] = entry.split('-').map((s) => s.trim());
    const from = first === undefined ? undefined : parsePort(first);
    const to = last === undefined ? from : parsePort(last);
    if (from === undefined || to === undefined || rest.length > 0 || to < from) {
      throw new Error(`"${entry}" is not a port (1-65535) or a range such as 8000-8099`);
    }
    return { from, to };
  });
}

/** The port a URL connects to: its explicit port, else the scheme's default. */
export function portOfUrl(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

export function isPortAllowed(port: number, extra: readonly PortRange[]): boolean {
  return STANDARD_PSP_PORTS.includes(port) || extra.some((r) => port >= r.from && port <= r.to);
}

/** Refuses a port outside 443, 80 and `extra`, naming the ports that are allowed. */
export function assertPortAllowed(port: number, extra: readonly PortRange[]): void {
  if (isPortAllowed(port, extra)) return;
  const allowed = [...STANDARD_PSP_PORTS, ...extra.map((r) => (r.from === r.to ? `${r.from}` : `${r.from}-${r.to}`))].join(', ');
  throw forbidden(`pspUrl uses port ${port}; PSPs are reached only on ports ${allowed}.`);
}
