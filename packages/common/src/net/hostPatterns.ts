import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export type HostPatternResult = { ok: true; value: string } | { ok: false; message: string };

/**
 * A host pattern, shared by API-key domain restrictions (gateway) and merchant PSP host
 * allowlists (gateway validates, proxy enforces): a host name (`shop.example.com`) or a
 * wildcard for its subdomains (`*.example.com`, which matches `a.example.com` and
 * `a.b.example.com` but not `example.com` itself). Internationalised names are kept in their
 * ASCII (punycode) form, as browsers send them in `Origin` and URL parsers produce them.
 * `localhost` is accepted without a dot (local development).
 *
 * With `ipLiterals` an IPv4 or IPv6 address is accepted too (with or without [brackets]),
 * stored in the form the WHATWG URL parser gives a URL's hostname, so it compares equal to it.
 */
export function canonicalHostPattern(raw: string, options: { ipLiterals?: boolean; ipMessage?: string } = {}): HostPatternResult {
  const trimmed = raw.trim().toLowerCase().replace(/\.$/, '');
  if (trimmed === '') return { ok: false, message: 'is empty' };
  if (options.ipLiterals) {
    const bare = trimmed.startsWith('[') && trimmed.endsWith(']') ? trimmed.slice(1, -1) : trimmed;
    if (isIP(bare) !== 0) {
      const host = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
      return { ok: true, value: host.startsWith('[') ? host.slice(1, -1) : host };
    }
  }
  if (/[/:@?#\s]/.test(trimmed))
    return { ok: false, message: 'must be a host name only, without scheme, port or path (e.g. shop.example.com)' };
  const wildcard = trimmed.startsWith('*.');
  const rest = wildcard ? trimmed.slice(2) : trimmed;
  if (rest.includes('*')) return { ok: false, message: 'may use "*" only as the whole first label, as in *.example.com' };
  if (/^[0-9.]+$/.test(rest) || rest.includes('[')) {
    return { ok: false, message: options.ipLiterals ? 'is not a valid IP address' : (options.ipMessage ?? 'is an IP address') };
  }
  const ascii = domainToASCII(rest);
  if (ascii === '' || ascii.length > 253) return { ok: false, message: 'is not a valid host name' };
  const labels = ascii.split('.');
  if (!labels.every((l) => LABEL.test(l)))
    return { ok: false, message: 'is not a valid host name (letters, digits and hyphens between dots)' };
  if (labels.length < 2 && !(ascii === 'localhost' && !wildcard)) {
    return {
      ok: false,
      message: wildcard ? 'needs at least two labels after "*." (e.g. *.example.com)' : 'needs a dot (e.g. example.com)',
    };
  }
  return { ok: true, value: wildcard ? `*.${ascii}` : ascii };
}

/** `host` as a URL parser gives it (lower case, punycode, IPv6 without brackets) against canonical patterns. */
export function hostMatchesPatterns(host: string, patterns: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return patterns.some((pattern) => (pattern.startsWith('*.') ? h.endsWith(pattern.slice(1)) : h === pattern));
}
