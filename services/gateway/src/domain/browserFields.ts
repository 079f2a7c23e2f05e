import crypto from 'node:crypto';
import { canonicalOriginParts } from '@tessera/merchant-data';

/**
 * Rules of the hosted card fields that need no I/O: the Content-Security-Policy of the iframe
 * page and which origins CORS answers. See docs/browser.md for the threat model behind them.
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
  /** The only place the fields may send anything: the browser tokenization route's origin. */
  apiOrigin: string;
  /** The publishable key's allowed origins: the only pages that may frame the fields. */
  allowedOrigins: readonly string[];
}

/**
 * The iframe page's policy: its one inline script and one inline style by hash, nothing else
 * loaded, card data sent only to the API, no form submission or <base> trick, and framing only by
 * the key's own pages (clickjacking by any other site is refused by the browser).
 */
export function cardFieldsCsp(input: CardFieldsPolicyInput): string {
  return [
    "default-src 'none'",
    `script-src ${input.scriptHash}`,
    `style-src ${input.styleHash}`,
    `connect-src ${input.apiOrigin}`,
    "form-action 'none'",
    "base-uri 'none'",
    `frame-ancestors ${frameAncestorsOf(input.allowedOrigins)}`,
  ].join('; ');
}

/** A refusal page of the fields origin: no script, its one style, and never framed. */
export function refusalCsp(styleHash: string): string {
  return `default-src 'none'; style-src ${styleHash}; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`;
}

/**
 * CORS on the browser tokenization route: the fields origin is the only page that calls it, so it
 * is the only origin ever echoed, and only for exactly its canonical spelling (canonicalOriginParts).
 * Credentials are never allowed (the key travels in a header). The route's own "is this the card
 * fields calling" check is this one too.
 */
export function corsAllowedOrigin(requestOrigin: string | undefined, fieldsOrigin: string): string | undefined {
  return canonicalOriginParts(requestOrigin) !== undefined && requestOrigin === fieldsOrigin ? fieldsOrigin : undefined;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}
