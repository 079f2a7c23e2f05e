import { resolveClientIp } from './clientIp';
import { parseCidrList } from '@tessera/common';

describe('client IP resolution', () => {
  const proxies = parseCidrList(['10.0.0.0/8', 'fd00::/8']);

  it('uses the socket address when no proxies are trusted, whatever X-Forwarded-For says', () => {
    expect(resolveClientIp('198.51.100.1', '203.0.113.5', [])).toBe('198.51.100.1');
  });

  it('normalises an IPv4-mapped socket address', () => {
    expect(resolveClientIp('::ffff:198.51.100.1', undefined, [])).toBe('198.51.100.1');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    expect(resolveClientIp('198.51.100.1', '203.0.113.5', proxies)).toBe('198.51.100.1');
  });

  it('takes the nearest untrusted hop when the peer is a trusted proxy', () => {
    expect(resolveClientIp('10.0.0.2', '203.0.113.5', proxies)).toBe('203.0.113.5');
  });

  it('skips trusted proxies from the right and ignores client-written entries further left', () => {
    expect(resolveClientIp('::ffff:10.0.0.2', '1.1.1.1, 203.0.113.5, 10.0.0.9', proxies)).toBe('203.0.113.5');
  });

  it('reads repeated X-Forwarded-For headers as one list', () => {
    expect(resolveClientIp('10.0.0.2', ['1.1.1.1', '203.0.113.5, 10.0.0.3'], proxies)).toBe('203.0.113.5');
  });

  it('handles IPv6 hops and hops written with ports', () => {
    expect(resolveClientIp('fd00::1', '2001:db8::5', proxies)).toBe('2001:db8::5');
    expect(resolveClientIp('10.0.0.2', '203.0.113.5:4711', proxies)).toBe('203.0.113.5');
    expect(resolveClientIp('10.0.0.2', '[2001:db8::5]:443', proxies)).toBe('2001:db8::5');
  });

  it('returns the furthest proxy when every hop is trusted', () => {
    expect(resolveClientIp('10.0.0.2', '10.0.0.7', proxies)).toBe('10.0.0.7');
    expect(resolveClientIp('10.0.0.2', undefined, proxies)).toBe('10.0.0.2');
  });

  it('gives up (undefined) when the nearest untrusted hop is not an address', () => {
    expect(resolveClientIp('10.0.0.2', '203.0.113.5, garbage', proxies)).toBeUndefined();
    expect(resolveClientIp(undefined, undefined, proxies)).toBeUndefined();
  });
});
