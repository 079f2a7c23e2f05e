import { isPortAllowed, parsePortList, portOfUrl } from './ports';

describe('PSP port policy', () => {
  it('allows 443 and 80 with no configuration, and nothing else', () => {
    expect(isPortAllowed(443, [])).toBe(true);
    expect(isPortAllowed(80, [])).toBe(true);
    for (const port of [22, 25, 6379, 8080, 8443, 50051, 1]) expect(isPortAllowed(port, [])).toBe(false);
  });

  it('adds configured ports and ranges, bounds included', () => {
    const extra = parsePortList(['8443', '9000-9010']);
    expect(extra).toEqual([
      { from: 8443, to: 8443 },
      { from: 9000, to: 9010 },
    ]);
    expect([8443, 9000, 9005, 9010].every((p) => isPortAllowed(p, extra))).toBe(true);
    expect([8442, 8444, 8999, 9011].some((p) => isPortAllowed(p, extra))).toBe(false);
  });

  it.each(['0', '65536', 'http', '80-', '-80', '90-80', '1-2-3', '8.5', ' '])('refuses the entry "%s"', (entry) => {
    expect(() => parsePortList([entry])).toThrow(/is not a port/);
  });

  it("reads the port a URL connects to, with the scheme's default", () => {
    expect(portOfUrl(new URL('https://psp.example/x'))).toBe(443);
    expect(portOfUrl(new URL('http://psp.example/x'))).toBe(80);
    expect(portOfUrl(new URL('https://psp.example:8443/x'))).toBe(8443);
    // The URL parser drops a port equal to the default, so :443 reads as the default.
    expect(portOfUrl(new URL('https://psp.example:443/x'))).toBe(443);
    expect(portOfUrl(new URL('http://psp.example:443/x'))).toBe(443);
  });
});
