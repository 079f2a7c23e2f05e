import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface Cidr {
  address: Address;
  bits: number;
}

/**
 * Parses an address the way clients present it: IPv4-mapped IPv6 (`::ffff:10.0.0.1`, what a
 * dual-stack socket reports for an IPv4 peer) becomes plain IPv4 so it matches IPv4 ranges.
 */
export function parseIp(value: string): Address | undefined {
  const trimmed = value.trim();
  // Only dotted-quad IPv4: ipaddr.js would otherwise accept forms like "10" or "0x0a.1".
  if (!ipaddr.IPv4.isValidFourPartDecimal(trimmed) && !ipaddr.IPv6.isValid(trimmed)) return undefined;
  try {
    return ipaddr.process(trimmed);
  } catch {
    return undefined;
  }
}

/** Normalises an address for comparison and display (`::ffff:1.2.3.4` -> `1.2.3.4`). */
export function normalizeIp(value: string): string | undefined {
  return parseIp(value)?.toString();
}

/** A CIDR or a bare address (taken as a single host). Mapped IPv6 ranges become IPv4 ranges. */
export function parseCidr(value: string): Cidr | undefined {
  const trimmed = value.trim();
  if (!trimmed.includes('/')) {
    const address = parseIp(trimmed);
    return address ? { address, bits: address.kind() === 'ipv4' ? 32 : 128 } : undefined;
  }
  if (!ipaddr.IPv4.isValidCIDRFourPartDecimal(trimmed) && !ipaddr.IPv6.isValidCIDR(trimmed)) return undefined;
  let parsed: [Address, number];
  try {
    parsed = ipaddr.parseCIDR(trimmed);
  } catch {
    return undefined;
  }
  const [address, bits] = parsed;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return { address: (address as ipaddr.IPv6).toIPv4Address(), bits: bits - 96 };
  }
  return { address, bits };
}

/** The canonical text of a CIDR (network address / bits), or undefined when it does not parse. */
export function canonicalCidr(value: string): string | undefined {
  const cidr = parseCidr(value);
  if (!cidr) return undefined;
  const network =
    cidr.address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${cidr.address.toString()}/${cidr.bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${cidr.address.toString()}/${cidr.bits}`);
  return `${network.toString()}/${cidr.bits}`;
}

export function parseCidrList(values: readonly string[]): Cidr[] {
  const out: Cidr[] = [];
  for (const value of values) {
    const cidr = parseCidr(value);
    if (cidr) out.push(cidr);
  }
  return out;
}

export function ipInCidrs(ip: string | undefined, cidrs: readonly Cidr[]): boolean {
  if (ip === undefined) return false;
  const address = parseIp(ip);
  if (!address) return false;
  return cidrs.some((cidr) => cidr.address.kind() === address.kind() && address.match(cidr.address, cidr.bits));
}
