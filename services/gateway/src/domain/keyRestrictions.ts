import { canonicalCidr, canonicalHostPattern, hostMatchesPatterns, ipInCidrs, parseCidrList } from '@tessera/common';
import type { ApiKeyRecord } from './apiKeys';

export const MAX_ALLOWED_CIDRS = 100;
export const MAX_ALLOWED_DOMAINS = 100;

export type PatternResult = { ok: true; value: string } | { ok: false; message: string };

/**
 * A domain restriction: a host name (`shop.example.com`) or a wildcard for its subdomains
 * (`*.example.com`, which matches `a.example.com` and `a.b.example.com` but not `example.com`
 * itself). Internationalised names are stored in their ASCII (punycode) form, as browsers send
 * them in `Origin`. IP literals belong in the IP allowlist; `localhost` is allowed for local
 * development of a payment form.
 */
export function canonicalDomainPattern(raw: string): PatternResult {
  return canonicalHostPattern(raw, { ipMessage: 'is an IP address: put addresses in the IP allowlist' });
}

export function canonicalCidrEntry(raw: string): PatternResult {
  const value = canonicalCidr(raw);
  if (value === undefined) {
    return { ok: false, message: 'is not an IPv4/IPv6 address or CIDR (examples: 203.0.113.7, 203.0.113.0/24, 2001:db8::/32)' };
  }
  return { ok: true, value };
}

/** The host of an `Origin` header (`https://shop.example.com:8443` -> `shop.example.com`), or undefined. */
export function originHost(origin: string | undefined, mode: ApiKeyRecord['mode']): string | undefined {
  if (origin === undefined || origin === 'null') return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  // A live key's form must be served over https; plain http is fine for test keys on a dev machine.
  if (url.protocol !== 'https:' && !(mode === 'test' && url.protocol === 'http:')) return undefined;
  return url.hostname.toLowerCase();
}

export function hostMatchesDomains(host: string, patterns: readonly string[]): boolean {
  return hostMatchesPatterns(host, patterns);
}

export type RestrictionFailure = 'ip_not_allowed' | 'origin_not_allowed';

/**
 * Every restriction set on a key must hold. An IP allowlist limits the key to the merchant's
 * servers; a domain allowlist limits it to browsers on the merchant's pages, identified by the
 * `Origin` header that browsers always send on cross-origin calls. A request without an allowed
 * Origin is refused by a domain-restricted key. (Origin can be forged by a non-browser client:
 * domain restrictions contain a key used in a web page, they do not replace an IP allowlist for
 * server keys.)
 */
export function checkKeyRestrictions(
  record: Pick<ApiKeyRecord, 'allowedCidrs' | 'allowedDomains' | 'mode'>,
  request: { clientIp: string | undefined; origin: string | undefined },
): RestrictionFailure | undefined {
  if (record.allowedCidrs.length > 0 && !ipInCidrs(request.clientIp, parseCidrList(record.allowedCidrs))) return 'ip_not_allowed';
  const domains = record.allowedDomains ?? [];
  if (domains.length > 0) {
    const host = originHost(request.origin, record.mode);
    if (host === undefined || !hostMatchesDomains(host, domains)) return 'origin_not_allowed';
  }
  return undefined;
}
