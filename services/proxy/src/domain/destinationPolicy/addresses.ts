import ipaddr from 'ipaddr.js';
import { ipInCidrs, parseCidr, type Cidr } from '@tessera/common';
import { forbidden } from './forbidden';

/**
 * Which outbound addresses the proxy may connect to. The proxy is the only service with
 * internet access, so a caller-chosen URL must never reach internal networks (SSRF): loopback,
 * RFC 1918, link-local (cloud metadata at 169.254.169.254), and every other non-global range.
 */

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;
export type { Cidr };

export interface AddressClass {
  /** ipaddr.js range name, or our own name for ranges it does not know. */
  range: string;
  globalUnicast: boolean;
}

/** Reader-facing wording for each refused range, used in psp_destination_forbidden messages. */
const RANGE_DESCRIPTIONS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved or documentation address',
  as112: 'a reserved address',
  amt: 'a reserved address',
  benchmarking: 'a benchmarking address',
  uniqueLocal: 'a unique-local (private) address',
  ipv4Mapped: 'an IPv4-mapped address',
  rfc6145: 'an IPv4-translated address',
  rfc6052: 'a NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  as112v6: 'a reserved address',
  orchid2: 'a reserved address',
  deprecatedOrchid: 'a reserved address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
  droneRemoteIdProtocolEntityTags: 'a reserved address',
  segmentRouting: 'a reserved address',
  notGlobal: 'an address outside the global unicast range',
  invalid: 'an invalid address',
};

export function describeRange(range: string): string {
  return RANGE_DESCRIPTIONS[range] ?? 'a non-public address';
}

/** 2000::/3 is the only IPv6 space IANA allocates for global unicast (RFC 4291 section 2.4). */
const IPV6_GLOBAL_UNICAST = { address: ipaddr.IPv6.parse('2000::'), bits: 3 };

function parseAddress(address: string): IpAddress | undefined {
  // ipaddr.process() turns ::ffff:a.b.c.d into a.b.c.d, so a mapped loopback is judged as loopback.
  try {
    return ipaddr.process(address);
  } catch {
    return undefined;
  }
}

/** Classifies one IP address (as returned by DNS or written as a URL literal). */
export function classifyAddress(address: string): AddressClass {
  const ip = parseAddress(address);
  if (ip === undefined) return { range: 'invalid', globalUnicast: false };
  const range = ip.range();
  if (range !== 'unicast') return { range, globalUnicast: false };
  if (ip.kind() === 'ipv6' && !ip.match(IPV6_GLOBAL_UNICAST.address, IPV6_GLOBAL_UNICAST.bits)) {
    return { range: 'notGlobal', globalUnicast: false };
  }
  return { range, globalUnicast: true };
}

/**
 * Parses PSP_ALLOWED_CIDRS entries. Throws on the first malformed entry, naming it, because
 * this runs at start-up on operator config (not on caller input).
 */
export function parseCidrList(entries: readonly string[]): Cidr[] {
  return entries.map((entry) => {
    const cidr = parseCidr(entry);
    if (cidr === undefined) throw new Error(`not a valid IPv4/IPv6 CIDR: ${JSON.stringify(entry)}`);
    return cidr;
  });
}

/** True when the address lies inside one of the operator's explicitly allowed CIDRs. */
export function isAddressAllowed(address: string, allowlist: readonly Cidr[]): boolean {
  return ipInCidrs(address, allowlist);
}

/** On refusal, `description` is a phrase such as "a loopback address" for the error message. */
export type AddressVerdict = { allowed: true } | { allowed: false; range: string; description: string };

const ALLOWED: AddressVerdict = { allowed: true };

/** Most distinct addresses remembered per allowlist; the memo starts over when it is full. */
export const VERDICT_MEMO_LIMIT = 1024;

/**
 * Verdicts per address text, per allowlist. A verdict depends only on the address and the
 * allowlist (fixed at start-up), never on DNS, so remembering it changes nothing about what
 * is refused: every address DNS answers is still judged, on every lookup. It saves the
 * parsing and range matching, which costs ~3 µs for an IPv4 and ~28 µs for an IPv6 address,
 * on each call and each new connection.
 */
const verdictMemos = new WeakMap<readonly Cidr[], Map<string, AddressVerdict>>();

function judgeAddress(address: string, allowlist: readonly Cidr[]): AddressVerdict {
  let memo = verdictMemos.get(allowlist);
  if (memo === undefined) {
    memo = new Map();
    verdictMemos.set(allowlist, memo);
  }
  let verdict = memo.get(address);
  if (verdict === undefined) {
    verdict = judgeAddressUncached(address, allowlist);
    if (memo.size >= VERDICT_MEMO_LIMIT) memo.clear();
    memo.set(address, verdict);
  }
  return verdict;
}

function judgeAddressUncached(address: string, allowlist: readonly Cidr[]): AddressVerdict {
  if (isAddressAllowed(address, allowlist)) return ALLOWED;
  const cls = classifyAddress(address);
  return cls.globalUnicast ? ALLOWED : { allowed: false, range: cls.range, description: describeRange(cls.range) };
}

/**
 * Judges every address a host resolves to: one bad address refuses the whole destination,
 * since the connection could land on any of them. `allowlist` must not be changed once used
 * (verdicts are remembered per allowlist).
 */
export function judgeAddresses(addresses: readonly string[], allowlist: readonly Cidr[]): AddressVerdict {
  if (addresses.length === 0) return { allowed: false, range: 'none', description: 'no address' };
  for (const address of addresses) {
    const verdict = judgeAddress(address, allowlist);
    if (!verdict.allowed) return verdict;
  }
  return ALLOWED;
}

/**
 * Refuses unless every address passes, with a message saying which kind of address was found,
 * never echoing the address or host itself.
 */
export function assertAddressesAllowed(addresses: readonly string[], allowlist: readonly Cidr[], isIpLiteral: boolean): void {
  const verdict = judgeAddresses(addresses, allowlist);
  if (verdict.allowed) return;
  throw forbidden(isIpLiteral ? `pspUrl points to ${verdict.description}.` : `The pspUrl host resolves to ${verdict.description}.`);
}

/** Never opened in production: loopback, unspecified, link-local (cloud metadata at 169.254.169.254, AWS's fd00:ec2::254). */
const NEVER_IN_PRODUCTION = parseCidrList([
  '127.0.0.0/8',
  '0.0.0.0/8',
  '169.254.0.0/16',
  '::1/128',
  '::/128',
  'fe80::/10',
  'fd00:ec2::254/128',
]);
/** Whole private blocks: an entry may point inside one (a PSP reached over a private link), never open all of it. */
const PRIVATE_BLOCKS = parseCidrList(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7']);

function contains(outer: Cidr, inner: Cidr): boolean {
  return outer.address.kind() === inner.address.kind() && outer.bits <= inner.bits && inner.address.match(outer.address, outer.bits);
}

function overlaps(a: Cidr, b: Cidr): boolean {
  return contains(a, b) || contains(b, a);
}

function formatCidr(cidr: Cidr): string {
  return `${cidr.address.toString()}/${cidr.bits}`;
}

/**
 * Why a PSP_ALLOWED_CIDRS entry is unsafe in production, or undefined. `0.0.0.0/0` or `::/0` would
 * switch the SSRF policy off; loopback reaches the services' own ports, link-local the cloud
 * metadata endpoint (credentials); a whole private block reaches every internal host.
 */
export function productionCidrProblem(cidr: Cidr): string | undefined {
  const never = NEVER_IN_PRODUCTION.find((range) => overlaps(cidr, range));
  if (never !== undefined) return `${formatCidr(cidr)} reaches ${formatCidr(never)} (loopback, unspecified or link-local/metadata)`;
  const block = PRIVATE_BLOCKS.find((range) => contains(cidr, range));
  if (block !== undefined) return `${formatCidr(cidr)} opens the whole private range ${formatCidr(block)}`;
  return undefined;
}
