import { assertAddressesAllowed, type Cidr } from './destinationPolicy/addresses';
import { assertHostOnAllowlist } from './destinationPolicy/hosts';
import { assertPortAllowed, portOfUrl, type PortRange } from './destinationPolicy/ports';
import { checkDestinationUrl, type Destination, type Mode } from './destinationPolicy/url';

/**
 * The proxy's one destination policy: where a caller-chosen pspUrl may send card data. The proxy
 * is the only service with internet access, so this is what keeps a merchant's URL (or a leaked
 * key's) away from internal networks (SSRF), non-PSP ports and hosts the merchant did not list.
 * Its parts live in ./destinationPolicy/ and are not imported from anywhere else:
 * - url.ts: http/https only, https only for live keys, no credentials in the URL, a host;
 * - hosts.ts: the merchant's PSP host allowlist;
 * - ports.ts: 443, 80 and PSP_ALLOWED_PORTS;
 * - addresses.ts: only global unicast addresses, plus PSP_ALLOWED_CIDRS.
 * No I/O: DNS and sockets belong to the egress, which is handed this policy and asks it about
 * every address it resolves and every socket it opens.
 */
export interface DestinationPolicy {
  /**
   * The URL decision, before any DNS, render or connection: the URL rules, then the merchant's
   * host allowlist, then the port.
   */
  checkUrl(raw: string, mode: Mode, allowedHosts: readonly string[]): Destination;
  /**
   * The address decision: refuses unless every address passes (one bad answer refuses the host,
   * since a connection could land on any of them). Asked about the pre-flight's DNS answer and
   * again at connect time.
   */
  checkAddresses(addresses: readonly string[], isIpLiteral: boolean): void;
  /** The port rule alone, for the connector, which sees a port and no URL. */
  checkPort(port: number): void;
}

/** What the egress needs of the policy: the rules it applies at connect time. */
export type ConnectPolicy = Pick<DestinationPolicy, 'checkAddresses' | 'checkPort'>;

export interface DestinationPolicyConfig {
  /** PSP_ALLOWED_CIDRS: non-public ranges opened anyway. Never changed afterwards (verdicts are remembered per list). */
  allowedCidrs: readonly Cidr[];
  /** PSP_ALLOWED_PORTS: ports besides 443 and 80. */
  allowedPorts: readonly PortRange[];
}

export function createDestinationPolicy(config: DestinationPolicyConfig): DestinationPolicy {
  const { allowedCidrs, allowedPorts } = config;
  return {
    checkUrl(raw, mode, allowedHosts) {
      const destination = checkDestinationUrl(raw, mode);
      assertHostOnAllowlist(destination.hostname, allowedHosts);
      assertPortAllowed(portOfUrl(destination.url), allowedPorts);
      return destination;
    },
    checkAddresses: (addresses, isIpLiteral) => assertAddressesAllowed(addresses, allowedCidrs, isIpLiteral),
    checkPort: (port) => assertPortAllowed(port, allowedPorts),
  };
}

export { logHostOf, parseMode, type Destination, type Mode } from './destinationPolicy/url';
// Start-up parsing of the policy's configuration (config.ts).
export { parseCidrList, productionCidrProblem, type Cidr } from './destinationPolicy/addresses';
export { parsePortList, type PortRange } from './destinationPolicy/ports';
