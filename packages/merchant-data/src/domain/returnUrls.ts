import type { KeyMode } from '@tessera/common';
import type { PatternResult } from './keyRestrictions';

/**
 * Return and cancel URLs of the hosted payment page (docs/browser.md, "Open redirect"). A merchant
 * registers the URLs its shoppers may be sent back to; a form session names one, and the page
 * redirects only there. Every rule below exists so that no spelling of a URL can make the browser
 * go somewhere the registered entry does not name.
 */

export const MAX_RETURN_URLS = 20;
export const MAX_RETURN_URL_LENGTH = 2048;

/**
 * Refused in the text itself, before parsing: the WHATWG parser silently drops tabs and newlines,
 * turns `\` into `/` and trims spaces, so text containing them means something other than it
 * shows. Non-ASCII is refused too (an IDN is given in its `xn--` form, a path percent-encoded), so
 * a homograph can never look like the registered host.
 */
const UNSAFE_TEXT = /[^\x21-\x7e]|\\/;

/** The scheme://host[:port]/path a URL is matched on: WHATWG-normalised, default port dropped. */
function matchPartOf(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

interface ParsedUrl {
  url: URL;
  /** The WHATWG serialisation: equal to the input only if the input was already canonical. */
  serialized: string;
}

function parseStrict(raw: string): ParsedUrl | { error: string } {
  if (raw.length === 0 || raw.length > MAX_RETURN_URL_LENGTH) return { error: `must be 1-${MAX_RETURN_URL_LENGTH} characters` };
  if (UNSAFE_TEXT.test(raw)) return { error: 'must be plain ASCII without spaces, tabs, newlines or backslashes' };
  if (!/^https?:\/\/[^/]/i.test(raw)) return { error: 'must be an absolute http(s) URL (https://shop.example/return)' };
  if (!URL.canParse(raw)) return { error: 'is not a valid URL' };
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { error: 'must be an http(s) URL' };
  // The authority as typed: a %-escape there is decoded by the parser (`shop%2etest` is `shop.test`).
  const authority = raw.slice(raw.indexOf('//') + 2).split(/[/?#]/, 1)[0] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) return { error: 'must not contain credentials (user@host)' };
  if (raw.includes('#')) return { error: 'must not contain a fragment (#…)' };
  if (authority.includes('%')) return { error: 'must not percent-encode the host' };
  if (url.hostname === '') return { error: 'must name a host' };
  return { url, serialized: url.href };
}

/**
 * A URL as an operator registers it: scheme, host, optional port and path; no query, fragment or
 * credentials. Written in its canonical form (lower-case scheme and host, default port dropped,
 * `.`/`..` segments resolved), which is what a session's URL must then match exactly.
 */
export function canonicalReturnUrlEntry(raw: string): PatternResult {
  const parsed = parseStrict(raw.trim());
  if ('error' in parsed) return { ok: false, message: parsed.error };
  if (parsed.url.search !== '' || parsed.serialized.includes('?'))
    return { ok: false, message: 'must not contain a query (any query is allowed at use)' };
  return { ok: true, value: matchPartOf(parsed.url) };
}

export type ReturnUrlCheck = { ok: true; url: string } | { ok: false; message: string };

/**
 * Whether a form session may send the shopper to `raw`: it must be written canonically (what the
 * browser will be sent is exactly what the merchant wrote, so `HTTPS://SHOP.TEST`, `:443`,
 * `/a/../b` or `%2e%2e` never pass as something else), its scheme://host[:port]/path must equal a
 * registered entry, and live keys need https. Any query the merchant adds is kept.
 */
export function checkReturnUrl(raw: string, registered: readonly string[], mode: KeyMode): ReturnUrlCheck {
  const parsed = parseStrict(raw);
  if ('error' in parsed) return { ok: false, message: parsed.error };
  if (parsed.serialized !== raw) {
    return { ok: false, message: `must be written in canonical form, exactly as registered (${quoteUrl(parsed.serialized)})` };
  }
  const matchPart = matchPartOf(parsed.url);
  if (!registered.includes(matchPart))
    return { ok: false, message: 'is not registered for this merchant (exact scheme, host, port and path)' };
  if (mode === 'live' && parsed.url.protocol !== 'https:') return { ok: false, message: 'must be https for live keys' };
  return { ok: true, url: parsed.serialized };
}

function quoteUrl(url: string): string {
  return url.length > 120 ? `${url.slice(0, 120)}…` : url;
}

/**
 * The URL the shopper is sent to: the registered URL with the merchant's own query kept and the
 * result parameters set (replacing any of the same name).
 */
export function returnLocation(url: string, params: Readonly<Record<string, string>>): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  return target.href;
}
