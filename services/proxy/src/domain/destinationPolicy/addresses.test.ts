import { classifyAddress, describeRange, isAddressAllowed, judgeAddresses, parseCidrList, VERDICT_MEMO_LIMIT } from './addresses';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['169.254.0.1', 'linkLocal'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
  ])('refuses the IPv4 address %s as %s', (address, range) => {
    expect(classifyAddress(address)).toEqual({ range, globalUnicast: false });
  });

  it.each([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'discard'],
    ['fec0::1', 'deprecatedSiteLocal'],
  ])('refuses the IPv6 address %s as %s', (address, range) => {
    expect(classifyAddress(address)).toEqual({ range, globalUnicast: false });
  });

  it('refuses a Teredo address', () => {
    // 2001::/32 sits inside ipaddr.js's wider reserved 2001::/23 too; either way it is refused.
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2').globalUnicast).toBe(false);
  });

  it('judges IPv4-mapped IPv6 addresses by the IPv4 address inside', () => {
    expect(classifyAddress('::ffff:127.0.0.1')).toEqual({ range: 'loopback', globalUnicast: false });
    expect(classifyAddress('::ffff:a9fe:a9fe')).toEqual({ range: 'linkLocal', globalUnicast: false });
    expect(classifyAddress('::ffff:10.0.0.1')).toEqual({ range: 'private', globalUnicast: false });
    expect(classifyAddress('::ffff:8.8.8.8')).toEqual({ range: 'unicast', globalUnicast: true });
  });

  it('refuses IPv6 addresses outside 2000::/3 that ipaddr.js calls unicast', () => {
    expect(classifyAddress('4000::1')).toEqual({ range: 'notGlobal', globalUnicast: false });
  });

  it('allows global unicast addresses', () => {
    expect(classifyAddress('8.8.8.8').globalUnicast).toBe(true);
    expect(classifyAddress('93.184.216.34').globalUnicast).toBe(true);
    expect(classifyAddress('2606:4700:4700::1111').globalUnicast).toBe(true);
  });

  it('treats text that is not an address as refused', () => {
    expect(classifyAddress('example.com')).toEqual({ range: 'invalid', globalUnicast: false });
  });
});

describe('parseCidrList and isAddressAllowed', () => {
  it('matches IPv4 addresses inside an allowed IPv4 CIDR only', () => {
    const list = parseCidrList(['127.0.0.1/32', '10.0.0.0/8']);
    expect(isAddressAllowed('127.0.0.1', list)).toBe(true);
    expect(isAddressAllowed('127.0.0.2', list)).toBe(false);
    expect(isAddressAllowed('10.200.3.4', list)).toBe(true);
    expect(isAddressAllowed('11.0.0.1', list)).toBe(false);
  });

  it('matches IPv6 addresses inside an allowed IPv6 CIDR only', () => {
    const list = parseCidrList(['::1/128', 'fd00::/8']);
    expect(isAddressAllowed('::1', list)).toBe(true);
    expect(isAddressAllowed('fd12::5', list)).toBe(true);
    expect(isAddressAllowed('fe80::1', list)).toBe(false);
  });

  it('matches an IPv4-mapped address against IPv4 CIDRs', () => {
    const list = parseCidrList(['127.0.0.1/32']);
    expect(isAddressAllowed('::ffff:127.0.0.1', list)).toBe(true);
  });

  it('accepts an IPv4-mapped CIDR as the IPv4 CIDR it denotes', () => {
    const list = parseCidrList(['::ffff:127.0.0.0/104']);
    expect(isAddressAllowed('127.9.9.9', list)).toBe(true);
  });

  it('never lets an IPv4 CIDR match an IPv6 address or the reverse', () => {
    expect(isAddressAllowed('::1', parseCidrList(['0.0.0.0/0']))).toBe(false);
    expect(isAddressAllowed('127.0.0.1', parseCidrList(['::/0']))).toBe(false);
  });

  it('takes a bare address as a single host', () => {
    const list = parseCidrList(['127.0.0.1', '::1']);
    expect(isAddressAllowed('127.0.0.1', list)).toBe(true);
    expect(isAddressAllowed('127.0.0.2', list)).toBe(false);
    expect(isAddressAllowed('::1', list)).toBe(true);
  });

  it.each(['10.0.0.0/33', '127.1/8', 'fe80::/129', 'nonsense/8', ''])('rejects the malformed entry %j', (entry) => {
    expect(() => parseCidrList([entry])).toThrow(/not a valid IPv4\/IPv6 CIDR/);
  });
});

describe('judgeAddresses', () => {
  it('refuses a host when any one of its addresses is forbidden', () => {
    expect(judgeAddresses(['8.8.8.8', '10.0.0.1'], [])).toEqual({
      allowed: false,
      range: 'private',
      description: describeRange('private'),
    });
  });

  it('allows a forbidden range that the allowlist opens', () => {
    expect(judgeAddresses(['127.0.0.1'], parseCidrList(['127.0.0.1/32']))).toEqual({ allowed: true });
  });

  it('remembers verdicts per allowlist: the same address is judged against each list on its own', () => {
    const open = parseCidrList(['10.0.0.0/8']);
    const closed = parseCidrList(['192.168.0.0/16']);
    for (let round = 0; round < 2; round++) {
      expect(judgeAddresses(['10.1.2.3'], open).allowed).toBe(true);
      expect(judgeAddresses(['10.1.2.3'], closed)).toEqual({ allowed: false, range: 'private', description: 'a private address' });
      expect(judgeAddresses(['10.1.2.3'], []).allowed).toBe(false);
    }
  });

  it('stays right after more distinct addresses than it remembers', () => {
    const allowlist = parseCidrList(['127.0.0.1/32']);
    expect(judgeAddresses(['127.0.0.2'], allowlist).allowed).toBe(false);
    for (let i = 0; i <= VERDICT_MEMO_LIMIT; i++) judgeAddresses([`8.8.${i >> 8}.${i & 255}`], allowlist);
    expect(judgeAddresses(['127.0.0.2'], allowlist).allowed).toBe(false);
    expect(judgeAddresses(['127.0.0.1'], allowlist).allowed).toBe(true);
  });

  it('refuses a host with no addresses', () => {
    expect(judgeAddresses([], []).allowed).toBe(false);
  });
});
