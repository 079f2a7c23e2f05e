import crypto from 'node:crypto';
import { canonicalOriginParts, originMatchesPatterns } from '@tessera/merchant-data';

/**
 * Rules of the hosted card fields that need no I/O: the Content-Security-Policy of the iframe
 * page and which callers the browser routes take. See docs/browser.md for the threat model behind them.
 */

/** A CSP hash source for an inline script or style (`'sha256-…'`). */
export function cspHashSource(content: string): string {
  return `'sha256-${crypto.createHash('sha256').update(content, 'utf8').digest('base64')}'`;
}

/**
 * An allowed origin as a CSP host-source: `https://shop.example`, `http://localhost:3000`,
 * `https://*.shop.example:8443`. Anything else (a space or `;` would add a directive) is dropped,
 * which can only make framing stricter.
 */
const CSP_ORIGIN = /^https?:\/\/(\*\.)?([a-z0-9-]+\.)*[a-z0-9-]+(:\d{1,5})?$|^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/;

export function frameAncestorsOf(allowedOrigins: readonly string[]): string {
  const sources = allowedOrigins.filter((o) => CSP_ORIGIN.test(o));
  return sources.length === 0 ? "'none'" : sources.join(' ');
}

export interface CardFieldsPolicyInput {
  scriptHash: string;
  styleHash: string;
  /** The publishable key's allowed origins: the only pages that may frame the fields. */
  allowedOrigins: readonly string[];
}

/**
 * The iframe page's policy: its one inline script and one inline style by hash, fonts from its own
 * origin only, nothing else loaded, card data sent only to its own origin (the browser routes are served beside it), no form submission or <base> trick, and framing only by
 * the key's own pages (clickjacking by any other site is refused by the browser).
 */
export function cardFieldsCsp(input: CardFieldsPolicyInput): string {
  return [
    "default-src 'none'",
    `script-src ${input.scriptHash}`,
    `style-src ${input.styleHash}`,
    // The fonts the fields serve themselves (/fields/v1/fonts/): a font from elsewhere could learn keystrokes via unicode-range.
    "font-src 'self'",
    "connect-src 'self'",
    "form-action 'none'",
    "base-uri 'none'",
    `frame-ancestors ${frameAncestorsOf(input.allowedOrigins)}`,
  ].join('; ');
}

/**
 * Why the fields page is refused to a frame (tessera.js hears the code from the refusal page and
 * emits it as an `error`): the key, or the page's origin as tessera.js claims it in the URL.
 */
export type FieldsRefusal = 'api_key_invalid' | 'origin_not_allowed' | 'fields_unavailable';

/**
 * The refusal for a usable key (or none) and the origin the page claims. Without a claim (an older
 * tessera.js) the fields are served and frame-ancestors alone decides. A claim is only a claim:
 * a page that lies about its origin to get the fields is still refused by frame-ancestors, and gets
 * a broken frame instead of a reason (tessera.js reports that as `fields_load_failed`).
 */
export function fieldsRefusalOf(
  key: { allowedOrigins: readonly string[] } | undefined,
  claimedOrigin: string | undefined,
): FieldsRefusal | undefined {
  if (key === undefined) return 'api_key_invalid';
  if (claimedOrigin !== undefined && !originMatchesPatterns(claimedOrigin, key.allowedOrigins)) return 'origin_not_allowed';
  return undefined;
}

/**
 * A refusal page of the fields origin: its one script (which tells the framing page why, see
 * cardFieldsPage.ts) and style by hash, nothing loaded, nothing sent. Any page may frame it: it
 * holds no input and no data (what it says, the key's own fields page already tells anyone who asks
 * for it by its frame-ancestors), and a frame the browser refuses could tell the page nothing.
 */
export function refusalCsp(input: { scriptHash: string; styleHash: string }): string {
  return [
    "default-src 'none'",
    `script-src ${input.scriptHash}`,
    `style-src ${input.styleHash}`,
    "form-action 'none'",
    "base-uri 'none'",
    'frame-ancestors *',
  ].join('; ');
}

/**
 * Whether a browser route's caller is Tessera's own card fields: the iframe posts to its own
 * origin, so a browser sends `Origin` = FIELDS_ORIGIN, exactly in its canonical spelling
 * (canonicalOriginParts). A same-origin GET carries no Origin, so there the browser's own
 * `Sec-Fetch-Site: same-origin` says it (neither header can be set by a page's script). A merchant
 * page's own script calling a route (a skimmer posting typed digits) is cross-site, and gets no
 * CORS header either, so its browser would not let it read the answer anyway.
 */
export function isFromFieldsPage(headers: { origin: string | undefined; secFetchSite: string | undefined }, fieldsOrigin: string): boolean {
  if (headers.origin === undefined) return headers.secFetchSite === 'same-origin';
  return canonicalOriginParts(headers.origin) !== undefined && headers.origin === fieldsOrigin;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}
