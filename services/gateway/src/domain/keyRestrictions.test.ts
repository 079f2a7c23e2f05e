import fc from 'fast-check';
import {
  authorizePublishableKey,
  canonicalCidrEntry,
  canonicalDomainPattern,
  canonicalOriginPattern,
  checkKeyRestrictions,
  hostMatchesDomains,
  originHost,
  originMatchesPatterns,
  refusedRestrictions,
} from '@tessera/merchant-data';
// The fields service's own check of its callers compares origins the same, exact way.
import { isFromFieldsPage } from '../../../fields/src/domain/browserFields';

/** The restrictions of a test publishable key allowing `allowedOrigins`. */
function aPublishableKey(allowedOrigins: string[]) {
  return { kind: 'publishable' as const, mode: 'test' as const, allowedCidrs: [], allowedDomains: [], allowedOrigins };
}

describe('domain restrictions', () => {
  it.each([
    ['Shop.Example.com', 'shop.example.com'],
    ['shop.example.com.', 'shop.example.com'],
    ['  *.Example.com ', '*.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['localhost', 'localhost'],
  ])('stores %j as %j', (raw, canonical) => {
    expect(canonicalDomainPattern(raw)).toEqual({ ok: true, value: canonical });
  });

  it.each([
    ['', /empty/],
    ['https://shop.example.com', /host name only/],
    ['shop.example.com:443', /host name only/],
    ['shop.example.com/pay', /host name only/],
    ['*.*.example.com', /"\*" only as the whole first label/],
    ['shop*.example.com', /"\*"/],
    ['*.com', /two labels/],
    ['*.localhost', /two labels/],
    ['example', /needs a dot/],
    ['203.0.113.7', /IP allowlist/],
    ['-shop.example.com', /not a valid host name/],
    ['sh_op.example.com', /not a valid host name/],
    [`${'a'.repeat(64)}.example.com`, /not a valid host name/],
  ])('refuses %j with a clear reason', (raw, reason) => {
    const result = canonicalDomainPattern(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(reason);
  });

  it('matches a wildcard against every subdomain but not the domain itself or look-alikes', () => {
    const patterns = ['*.example.com', 'pay.example.org'];
    expect(hostMatchesDomains('a.example.com', patterns)).toBe(true);
    expect(hostMatchesDomains('a.b.example.com', patterns)).toBe(true);
    expect(hostMatchesDomains('example.com', patterns)).toBe(false);
    expect(hostMatchesDomains('badexample.com', patterns)).toBe(false);
    expect(hostMatchesDomains('example.com.evil.test', patterns)).toBe(false);
    expect(hostMatchesDomains('pay.example.org', patterns)).toBe(true);
    expect(hostMatchesDomains('x.pay.example.org', patterns)).toBe(false);
  });

  it('never lets a wildcard match a host outside its domain (property)', () => {
    const label = fc.stringMatching(/^[a-z0-9]{1,10}$/);
    fc.assert(
      fc.property(label, label, fc.array(label, { maxLength: 3 }), (domain, other, subs) => {
        fc.pre(domain !== other);
        const host = [...subs, other, 'test'].join('.');
        expect(hostMatchesDomains(host, [`*.${domain}.test`])).toBe(false);
      }),
    );
  });

  it('reads the host of an Origin; a live key needs https', () => {
    expect(originHost('https://shop.example.com:8443', 'live')).toBe('shop.example.com');
    expect(originHost('https://Shop.Example.com:8443', 'live')).toBeUndefined();
    expect(originHost('http://[::1]:8080', 'test')).toBe('::1');
    expect(originHost('http://localhost:3000', 'test')).toBe('localhost');
    expect(originHost('http://shop.example.com', 'live')).toBeUndefined();
    expect(originHost('null', 'test')).toBeUndefined();
    expect(originHost('not a url', 'test')).toBeUndefined();
    expect(originHost(undefined, 'test')).toBeUndefined();
  });
});

describe('checkKeyRestrictions', () => {
  const key = (allowedCidrs: string[], allowedDomains: string[]) => ({ allowedCidrs, allowedDomains, mode: 'live' as const });

  it('accepts any request for a key without restrictions', () => {
    expect(checkKeyRestrictions(key([], []), { clientIp: '198.51.100.1', origin: undefined })).toBeUndefined();
  });

  it('refuses an address outside the IP allowlist, IPv4 and IPv6', () => {
    const k = key(['203.0.113.0/24', '2001:db8::/32'], []);
    expect(checkKeyRestrictions(k, { clientIp: '203.0.113.9', origin: undefined })).toBeUndefined();
    expect(checkKeyRestrictions(k, { clientIp: '2001:db8::1', origin: undefined })).toBeUndefined();
    expect(checkKeyRestrictions(k, { clientIp: '198.51.100.1', origin: undefined })).toBe('ip_not_allowed');
    expect(checkKeyRestrictions(k, { clientIp: undefined, origin: undefined })).toBe('ip_not_allowed');
  });

  it('with domains set, accepts only requests whose Origin is on them', () => {
    const k = key([], ['*.shop.example']);
    expect(checkKeyRestrictions(k, { clientIp: '198.51.100.1', origin: 'https://pay.shop.example' })).toBeUndefined();
    expect(checkKeyRestrictions(k, { clientIp: '198.51.100.1', origin: 'https://evil.example' })).toBe('origin_not_allowed');
    expect(checkKeyRestrictions(k, { clientIp: '198.51.100.1', origin: undefined })).toBe('origin_not_allowed');
  });

  it('requires every restriction that is set', () => {
    const k = key(['203.0.113.0/24'], ['shop.example']);
    expect(checkKeyRestrictions(k, { clientIp: '203.0.113.1', origin: 'https://shop.example' })).toBeUndefined();
    expect(checkKeyRestrictions(k, { clientIp: '198.51.100.1', origin: 'https://shop.example' })).toBe('ip_not_allowed');
    expect(checkKeyRestrictions(k, { clientIp: '203.0.113.1', origin: undefined })).toBe('origin_not_allowed');
  });

  it('treats records stored before domain restrictions existed as unrestricted by domain', () => {
    const legacy = { allowedCidrs: [], mode: 'test' as const } as unknown as Parameters<typeof checkKeyRestrictions>[0];
    expect(checkKeyRestrictions(legacy, { clientIp: '198.51.100.1', origin: undefined })).toBeUndefined();
  });
});

describe('canonicalCidrEntry', () => {
  it('normalises a range to its network address and explains a bad one with examples', () => {
    expect(canonicalCidrEntry('203.0.113.77/24')).toEqual({ ok: true, value: '203.0.113.0/24' });
    expect(canonicalCidrEntry('2001:DB8::1')).toEqual({ ok: true, value: '2001:db8::1/128' });
    const bad = canonicalCidrEntry('203.0.113.0/33');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.message).toMatch(/examples: 203\.0\.113\.7, 203\.0\.113\.0\/24, 2001:db8::\/32/);
  });
});

describe('allowed origins (publishable keys)', () => {
  it.each([
    'https://shop.example',
    'http://localhost:3000',
    'https://*.shop.example:8443',
    'https://xn--bcher-kva.example',
    'http://127.0.0.1:5173',
    'http://[::1]:8080',
  ])('stores %s as written', (raw) => {
    expect(canonicalOriginPattern(raw)).toEqual({ ok: true, value: raw });
  });

  it.each([
    ['https://Shop.Example', 'https://shop.example'],
    ['HTTPS://shop.example', 'https://shop.example'],
    ['https://shop.example/', 'https://shop.example'],
    ['https://shop.example.', 'https://shop.example'],
    [' https://shop.example ', 'https://shop.example'],
    ['https://shop.example:443', 'https://shop.example'],
    ['http://localhost:03000', 'http://localhost:3000'],
    ['https://shop%2eexample', 'https://shop.example'],
    ['https://*.Shop.Example:8443', 'https://*.shop.example:8443'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['http://[0:0::1]:8080', 'http://[::1]:8080'],
  ])('refuses %s, saying to write it as %s', (raw, canonical) => {
    const result = canonicalOriginPattern(raw);
    expect(result).toEqual({ ok: false, message: expect.stringContaining(`write it as "${canonical}"`) });
  });

  it.each([
    ['shop.example', /must be an origin/],
    ['https://shop.example/checkout', /without path/],
    ['https://user@shop.example', /without path, query or credentials/],
    ['ftp://shop.example', /http\(s\) origin/],
    ['https://shop.*.example', /whole first label/],
    ['https://*.com', /two labels/],
    ['https://*.203.0.113.7', /origin|IP address/],
  ])('refuses %s with the reason', (raw, reason) => {
    const result = canonicalOriginPattern(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(reason);
  });

  it('matches scheme, host and port exactly, and subdomains of a wildcard only', () => {
    const allowed = ['https://shop.example', 'https://*.pay.example:8443', 'http://localhost:3000'];
    for (const origin of ['https://shop.example', 'https://a.pay.example:8443', 'http://localhost:3000']) {
      expect(originMatchesPatterns(origin, allowed)).toBe(true);
    }
    for (const origin of [
      'http://shop.example',
      'https://shop.example:8443',
      'https://evilshop.example',
      'https://shop.example.evil.test',
      'https://pay.example:8443',
      'https://a.pay.example',
      'http://localhost:3001',
      'https://SHOP.example:443',
      'null',
      'not a url',
      undefined,
    ]) {
      expect(originMatchesPatterns(origin, allowed)).toBe(false);
    }
  });

  it('authorizes a publishable key only from one of its origins; a missing Origin or a secret key is refused', () => {
    const key = { kind: 'publishable' as const, allowedOrigins: ['https://*.shop.example'] };
    expect(authorizePublishableKey(key, 'https://pay.shop.example')).toBeUndefined();
    expect(authorizePublishableKey(key, 'https://shop.example')).toBe('origin_not_allowed');
    expect(authorizePublishableKey(key, 'https://pay.shop.example.evil.test')).toBe('origin_not_allowed');
    expect(authorizePublishableKey(key, undefined)).toBe('origin_not_allowed');
    expect(authorizePublishableKey({ allowedOrigins: ['https://pay.shop.example'] }, 'https://pay.shop.example')).toBe(
      'origin_not_allowed',
    );
  });

  it('on a /v1 route, refuses a publishable key only for an Origin it does not allow; IP allowlists do not apply', () => {
    const key = aPublishableKey(['https://shop.example']);
    expect(checkKeyRestrictions(key, { clientIp: '198.51.100.1', origin: 'https://evil.example' })).toBe('origin_not_allowed');
    expect(checkKeyRestrictions(key, { clientIp: '198.51.100.1', origin: 'https://shop.example' })).toBeUndefined();
    expect(checkKeyRestrictions(key, { clientIp: '198.51.100.1', origin: undefined })).toBeUndefined();
  });
});

describe('restrictions each kind may carry', () => {
  const none = { allowedCidrs: [], allowedDomains: [], allowedOrigins: [] };

  it('requires at least one origin on a publishable key, and refuses IP and domain lists on it', () => {
    expect(refusedRestrictions('publishable', 'test', none)).toMatchObject({ field: 'allowedOrigins', code: 'parameter_missing' });
    expect(
      refusedRestrictions('publishable', 'test', { ...none, allowedOrigins: ['https://a.example'], allowedCidrs: ['203.0.113.0/24'] }),
    ).toMatchObject({ field: 'allowedCidrs', code: 'parameter_invalid', message: expect.stringMatching(/IP restrictions do not apply/) });
    expect(
      refusedRestrictions('publishable', 'test', { ...none, allowedOrigins: ['https://a.example'], allowedDomains: ['a.example'] }),
    ).toMatchObject({ field: 'allowedDomains' });
    expect(refusedRestrictions('publishable', 'test', { ...none, allowedOrigins: ['https://a.example'] })).toBeUndefined();
  });

  it('accepts plain http origins only on test publishable keys', () => {
    const lists = { ...none, allowedOrigins: ['https://a.example', 'http://localhost:3000'] };
    expect(refusedRestrictions('publishable', 'test', lists)).toBeUndefined();
    expect(refusedRestrictions('publishable', 'live', lists)).toMatchObject({ field: 'allowedOrigins', message: /https/ });
  });

  it('refuses origins on a secret key and accepts its IP and domain lists', () => {
    expect(refusedRestrictions('secret', 'live', { ...none, allowedOrigins: ['https://a.example'] })).toMatchObject({
      field: 'allowedOrigins',
    });
    expect(
      refusedRestrictions('secret', 'live', { ...none, allowedCidrs: ['203.0.113.0/24'], allowedDomains: ['a.example'] }),
    ).toBeUndefined();
  });
});

/**
 * Issue 22: every origin check accepts exactly the canonical serialization a browser sends and
 * nothing a URL parser would repair into it. Each spelling is refused by all four checks: CORS and
 * the fields check of the browser route, the parent origin of a publishable key, a publishable
 * key's Origin on a /v1 route, and a secret key's allowed domains.
 */
describe('origins are compared only in their canonical spelling', () => {
  const publishable = aPublishableKey(['http://shop.test', 'http://shop.test:3000', 'http://*.wild.test']);
  const secret = { allowedCidrs: [], allowedDomains: ['shop.test', '*.wild.test'], mode: 'test' as const };
  const request = (origin: string) => ({ clientIp: '198.51.100.1', origin });

  it.each(['http://shop.test', 'http://shop.test:3000', 'http://a.wild.test'])('accepts %s', (origin) => {
    expect(authorizePublishableKey(publishable, origin)).toBeUndefined();
    expect(checkKeyRestrictions(publishable, request(origin))).toBeUndefined();
    expect(checkKeyRestrictions(secret, request(origin))).toBeUndefined();
    expect(isFromFieldsPage({ origin, secFetchSite: undefined }, origin)).toBe(true);
  });

  it.each([
    ['an upper-case scheme', 'HTTP://shop.test'],
    ['an upper-case host', 'http://SHOP.test'],
    ['a trailing slash', 'http://shop.test/'],
    ['a trailing dot', 'http://shop.test.'],
    ['a leading space', ' http://shop.test'],
    ['a trailing space', 'http://shop.test '],
    ['a tab inside', 'http://sh\top.test'],
    ['a percent-escaped dot', 'http://shop%2etest'],
    ['a zero-padded port', 'http://shop.test:03000'],
    ['the default port', 'http://shop.test:80'],
    ['an empty first label under a wildcard', 'http://.wild.test'],
    ['an empty label inside', 'http://a..wild.test'],
    ['userinfo before the allowed host', 'http://evil.test@shop.test'],
    ['userinfo with a password', 'http://a:b@shop.test'],
    ['a path', 'http://shop.test/pay'],
    ['a query', 'http://shop.test?x=1'],
    ['a fragment', 'http://shop.test#x'],
    ['the opaque origin', 'null'],
  ])('refuses %s (%j) everywhere', (_what, origin) => {
    expect(authorizePublishableKey(publishable, origin)).toBe('origin_not_allowed');
    expect(checkKeyRestrictions(publishable, request(origin))).toBe('origin_not_allowed');
    expect(checkKeyRestrictions(secret, request(origin))).toBe('origin_not_allowed');
    expect(isFromFieldsPage({ origin, secFetchSite: undefined }, 'http://shop.test')).toBe(false);
    expect(canonicalOriginPattern(origin).ok).toBe(false);
  });
});
