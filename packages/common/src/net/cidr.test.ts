import { canonicalCidr, ipInCidrs, normalizeIp, parseCidr, parseCidrList } from './cidr';

describe('CIDR matching', () => {
  const cidrs = parseCidrList(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);

  it('matches IPv4 addresses inside an IPv4 range and nothing outside it', () => {
    expect(ipInCidrs('203.0.113.200', cidrs)).toBe(true);
    expect(ipInCidrs('203.0.114.1', cidrs)).toBe(false);
  });

  it('treats a bare address as a single host', () => {
    expect(ipInCidrs('198.51.100.7', cidrs)).toBe(true);
    expect(ipInCidrs('198.51.100.8', cidrs)).toBe(false);
  });

  it('matches IPv6 addresses inside an IPv6 range', () => {
    expect(ipInCidrs('2001:db8:1234::1', cidrs)).toBe(true);
    expect(ipInCidrs('2001:db9::1', cidrs)).toBe(false);
  });

  it('matches an IPv4-mapped IPv6 address against IPv4 ranges', () => {
    expect(ipInCidrs('::ffff:203.0.113.9', cidrs)).toBe(true);
    expect(ipInCidrs('::ffff:192.0.2.1', cidrs)).toBe(false);
  });

  it('treats an IPv4-mapped IPv6 range as the IPv4 range it denotes', () => {
    expect(parseCidr('::ffff:10.0.0.0/104')).toEqual(parseCidr('10.0.0.0/8'));
    expect(ipInCidrs('10.1.2.3', parseCidrList(['::ffff:10.0.0.0/104']))).toBe(true);
  });

  it('never matches an undefined or malformed address, nor an empty list', () => {
    expect(ipInCidrs(undefined, cidrs)).toBe(false);
    expect(ipInCidrs('not an ip', cidrs)).toBe(false);
    expect(ipInCidrs('203.0.113.1', [])).toBe(false);
  });

  it('rejects ambiguous IPv4 spellings such as "10" or hexadecimal parts', () => {
    expect(parseCidr('10')).toBeUndefined();
    expect(parseCidr('0x0a.0.0.1')).toBeUndefined();
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('1.2.3/24')).toBeUndefined();
  });

  it('canonicalises CIDRs to their network address', () => {
    expect(canonicalCidr('10.1.2.3/8')).toBe('10.0.0.0/8');
    expect(canonicalCidr('203.0.113.7')).toBe('203.0.113.7/32');
    expect(canonicalCidr('2001:DB8::1/32')).toBe('2001:db8::/32');
    expect(canonicalCidr('nope')).toBeUndefined();
  });

  it('normalises IPv4-mapped socket addresses to plain IPv4', () => {
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeIp('::1')).toBe('::1');
    expect(normalizeIp('garbage')).toBeUndefined();
  });
});
