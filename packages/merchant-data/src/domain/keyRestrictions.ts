import { canonicalCidr, canonicalHostPattern, hostMatchesPatterns, ipInCidrs, maskCardNumbers, parseCidrList } from '@tessera/common';
import { keyKindOf, type ApiKeyKind, type ApiKeyRecord, type KeyMode } from './apiKeys';

export const MAX_ALLOWED_CIDRS = 100;
export const MAX_ALLOWED_DOMAINS = 100;
export const MAX_ALLOWED_ORIGINS = 100;

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

/** The host of an `Origin` header (`https://shop.example.com:8443` -> `shop.example.com`) when it is canonical, or undefined. */
export function originHost(origin: string | undefined, mode: ApiKeyRecord['mode']): string | undefined {
  const parts = canonicalOriginParts(origin);
  // A live key's form must be served over https; plain http is fine for test keys on a dev machine.
  if (parts === undefined || (parts.scheme !== 'https' && !(mode === 'test' && parts.scheme === 'http'))) return undefined;
  return parts.host.startsWith('[') ? parts.host.slice(1, -1) : parts.host;
}

/** An origin split as the browser's `Origin` header states it; `port` is '' for the scheme's default. */
interface OriginParts {
  scheme: 'http' | 'https';
  host: string;
  port: string;
}

/** `https://shop.example:8443` (no path, query or credentials) as its parts, or undefined. */
function originParts(text: string): OriginParts | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return undefined;
  return { scheme: url.protocol === 'https:' ? 'https' : 'http', host: url.hostname, port: url.port };
}

/**
 * The parts of an origin a request names (`Origin`, `x-tessera-parent-origin`) when it is exactly
 * the serialization a browser sends: `scheme://host[:port]`, http(s), lower case, no default port,
 * no path, userinfo, spaces, percent-escapes or empty labels. Anything else is refused rather than
 * repaired: the URL parser reads `HTTP://SHOP.test/`, ` http://shop.test`, `http://shop%2etest`,
 * `http://shop.test:03000` and `http://evil.test@shop.test` as some canonical origin, so comparing
 * after parsing accepts text that says something else than it is compared as. A browser never
 * sends those spellings; only a forged request does.
 */
export function canonicalOriginParts(text: string | undefined): OriginParts | undefined {
  if (text === undefined || !URL.canParse(text)) return undefined;
  const url = new URL(text);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== text) return undefined;
  // The parser keeps `shop.test.`, `.wild.test` and `a..b.test` as written; no browser origin has an empty label.
  if (!url.hostname.startsWith('[') && url.hostname.split('.').includes('')) return undefined;
  return { scheme: url.protocol === 'https:' ? 'https' : 'http', host: url.hostname, port: url.port };
}

/** Stands in for `*` while the URL parser reads a wildcard origin (it would refuse `*`). */
const WILDCARD_LABEL = 'tessera-wildcard-label';

/**
 * An allowed origin of a publishable key: scheme, host and port, exactly what a browser sends in
 * `Origin` (`https://shop.example`, `http://localhost:3000`). The host may be `*.` + a domain for
 * its subdomains, as domain restrictions allow; the scheme and port must still match exactly (a
 * default port is dropped, as browsers do). Unlike the host-only `allowedDomains` of a secret
 * key, an origin names the port too, so a page on another port of the same host is refused;
 * that is also the form a Content-Security-Policy `frame-ancestors` needs.
 */
export function canonicalOriginPattern(raw: string): PatternResult {
  const canonical = canonicalFormOfOrigin(raw);
  // Stored exactly as given, so what an operator typed is what requests are compared with.
  if (canonical.ok && canonical.value !== raw) {
    return {
      ok: false,
      message: `is not written canonically: write it as "${maskCardNumbers(canonical.value)}" (lower case, no default port, no trailing slash)`,
    };
  }
  return canonical;
}

/** The canonical spelling of an allowed origin, from any spelling the URL parser reads as one. */
function canonicalFormOfOrigin(raw: string): PatternResult {
  const trimmed = raw.trim().replace(/\/$/, '');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(trimmed);
  if (!scheme) return { ok: false, message: 'must be an origin: scheme, host and optional port (e.g. https://shop.example)' };
  const wildcard = trimmed.slice(scheme[0].length).startsWith('*.');
  const parsed = originParts(wildcard ? trimmed.replace('://*.', `://${WILDCARD_LABEL}.`) : trimmed);
  if (!parsed) {
    return { ok: false, message: 'must be an http(s) origin without path, query or credentials (e.g. https://shop.example:8443)' };
  }
  const hostText = wildcard ? `*.${parsed.host.slice(WILDCARD_LABEL.length + 1)}` : parsed.host;
  const host = canonicalHostPattern(hostText, { ipLiterals: !wildcard });
  if (!host.ok) return host;
  const hostPart = host.value.includes(':') ? `[${host.value}]` : host.value;
  return { ok: true, value: `${parsed.scheme}://${hostPart}${parsed.port === '' ? '' : `:${parsed.port}`}` };
}

/** True when the `Origin` header is canonical (canonicalOriginParts) and names one of the (canonical) allowed origins. */
export function originMatchesPatterns(origin: string | undefined, patterns: readonly string[]): boolean {
  const actual = canonicalOriginParts(origin);
  if (!actual) return false;
  const host = actual.host.startsWith('[') ? actual.host.slice(1, -1) : actual.host;
  return patterns.some((pattern) => {
    const wildcard = pattern.includes('://*.');
    const allowed = originParts(wildcard ? pattern.replace('://*.', `://${WILDCARD_LABEL}.`) : pattern);
    if (!allowed || allowed.scheme !== actual.scheme || allowed.port !== actual.port) return false;
    const allowedHost = wildcard
      ? `*.${allowed.host.slice(WILDCARD_LABEL.length + 1)}`
      : allowed.host.startsWith('[')
        ? allowed.host.slice(1, -1)
        : allowed.host;
    return hostMatchesPatterns(host, [allowedHost]);
  });
}

export interface KeyRestrictionLists {
  allowedCidrs: readonly string[];
  allowedDomains: readonly string[];
  allowedOrigins: readonly string[];
}

export interface RestrictionRefusal {
  field: keyof KeyRestrictionLists;
  code: 'parameter_invalid' | 'parameter_missing';
  message: string;
}

/**
 * Which restrictions a key of this kind and mode may carry. A publishable key is public by
 * design, so it must be tied to at least one origin, and an IP allowlist would name shoppers'
 * addresses, which no merchant knows: it is refused rather than stored and ignored. A secret key
 * is restricted by IP and host name; origins belong to publishable keys. A live publishable key
 * serves real card data, so its pages must be https.
 */
export function refusedRestrictions(kind: ApiKeyKind, mode: KeyMode, lists: KeyRestrictionLists): RestrictionRefusal | undefined {
  if (kind === 'secret') {
    if (lists.allowedOrigins.length > 0) {
      return {
        field: 'allowedOrigins',
        code: 'parameter_invalid',
        message: 'Allowed origins apply to publishable keys; restrict a secret key by IP address and domain instead.',
      };
    }
    return undefined;
  }
  if (lists.allowedCidrs.length > 0) {
    return {
      field: 'allowedCidrs',
      code: 'parameter_invalid',
      message: "IP restrictions do not apply to publishable keys (a shopper's browser has no fixed address); restrict it by origin.",
    };
  }
  if (lists.allowedDomains.length > 0) {
    return {
      field: 'allowedDomains',
      code: 'parameter_invalid',
      message: 'A publishable key is restricted by exact origins (scheme, host and port), not by domain.',
    };
  }
  if (lists.allowedOrigins.length === 0) {
    return {
      field: 'allowedOrigins',
      code: 'parameter_missing',
      message: 'A publishable key needs at least one allowed origin (e.g. https://shop.example).',
    };
  }
  if (mode === 'live') {
    const plain = lists.allowedOrigins.find((origin) => !origin.startsWith('https://'));
    if (plain !== undefined) {
      return { field: 'allowedOrigins', code: 'parameter_invalid', message: 'A live publishable key accepts https origins only.' };
    }
  }
  return undefined;
}

/**
 * The check the browser tokenization route (Tessera's card fields and hosted page) makes for a
 * publishable key: the page's `Origin` must be one of the key's allowed origins. A missing
 * Origin is refused too: browsers always send one on the cross-origin calls those pages make.
 */
export function authorizePublishableKey(
  record: Pick<ApiKeyRecord, 'kind' | 'allowedOrigins'>,
  origin: string | undefined,
): 'origin_not_allowed' | undefined {
  if (keyKindOf(record) !== 'publishable') return 'origin_not_allowed';
  return originMatchesPatterns(origin, record.allowedOrigins ?? []) ? undefined : 'origin_not_allowed';
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
  record: Pick<ApiKeyRecord, 'allowedCidrs' | 'allowedDomains' | 'mode' | 'kind' | 'allowedOrigins'>,
  request: { clientIp: string | undefined; origin: string | undefined },
): RestrictionFailure | undefined {
  // A publishable key has no IP or domain list: only its origins (and only a given Origin) count.
  if (keyKindOf(record) === 'publishable') {
    return request.origin !== undefined && authorizePublishableKey(record, request.origin) !== undefined ? 'origin_not_allowed' : undefined;
  }
  if (record.allowedCidrs.length > 0 && !ipInCidrs(request.clientIp, parseCidrList(record.allowedCidrs))) return 'ip_not_allowed';
  const domains = record.allowedDomains ?? [];
  if (domains.length > 0) {
    const host = originHost(request.origin, record.mode);
    if (host === undefined || !hostMatchesDomains(host, domains)) return 'origin_not_allowed';
  }
  return undefined;
}
