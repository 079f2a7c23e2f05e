/**
 * Reading a merchant payment page's Content-Security-Policy well enough to say when it got weaker
 * (PCI DSS 11.6.1: detect unauthorized changes to the security-impacting HTTP headers of the
 * payment page). Not a full CSP engine: it compares the directives that decide which scripts run,
 * where the page may be framed from and where it may send data.
 */

/** Directive name (lower case) to its source expressions, as written (keywords keep their quotes). */
export type ParsedPolicy = Map<string, string[]>;

/** A policy longer than this is not one a page sends on purpose; it is cut (and compared as cut). */
export const MAX_POLICY_LENGTH = 4096;

/** CSP3 §2.2.1: directives split on `;`, name and values on whitespace; a repeated directive is ignored. */
export function parsePolicy(policy: string): ParsedPolicy {
  const parsed: ParsedPolicy = new Map();
  for (const part of policy.slice(0, MAX_POLICY_LENGTH).split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name === undefined || name === '') continue;
    const key = name.toLowerCase();
    if (!parsed.has(key)) parsed.set(key, values);
  }
  return parsed;
}

/** The sources a fetch directive falls back to (CSP3 §6.8.3, "directive fallback list"), or undefined: no restriction. */
function effective(policy: ParsedPolicy, fallbacks: readonly string[]): string[] | undefined {
  for (const name of fallbacks) {
    const sources = policy.get(name);
    if (sources !== undefined) return sources;
  }
  return undefined;
}

const SCRIPTS = ['script-src-elem', 'script-src', 'default-src'];
const FRAMES = ['frame-src', 'child-src', 'default-src'];
const CONNECTIONS = ['connect-src', 'default-src'];

const isNonceOrHash = (source: string): boolean => /^'(nonce-|sha256-|sha384-|sha512-)/i.test(source);
/** What a source expression allows, for comparing two lists: nonces change on every load, so they compare as one. */
const comparable = (source: string): string => (/^'nonce-/i.test(source) ? "'nonce'" : source.toLowerCase());

/** CSP3 §6.1.13: 'unsafe-inline' is ignored when a nonce or hash is present (or 'strict-dynamic'). */
function allowsInlineScript(sources: readonly string[] | undefined): boolean {
  if (sources === undefined) return true;
  const lower = sources.map((s) => s.toLowerCase());
  return lower.includes("'unsafe-inline'") && !sources.some(isNonceOrHash) && !lower.includes("'strict-dynamic'");
}

/** Sources that newly appear in `after` for one directive group (hosts, schemes, `*`, keywords). */
function added(before: readonly string[], after: readonly string[]): string[] {
  const had = new Set(before.map(comparable));
  return [...new Set(after.map(comparable))].filter((s) => !had.has(s) && s !== "'none'");
}

/**
 * What `after` allows that `before` did not, in words an operator can act on; empty when it is
 * no weaker. `before` undefined (no policy seen yet): nothing to compare against. A policy that
 * disappears entirely is one weakening ("no Content-Security-Policy").
 */
export function policyWeakenings(before: string | null | undefined, after: string | null | undefined): string[] {
  if (before === undefined || before === null || before.trim() === '') return [];
  if (after === undefined || after === null || after.trim() === '') return ['The page no longer sends a Content-Security-Policy.'];
  const was = parsePolicy(before);
  const now = parsePolicy(after);
  const found: string[] = [];
  const group = (what: string, fallbacks: readonly string[]): void => {
    const from = effective(was, fallbacks);
    const to = effective(now, fallbacks);
    if (from === undefined) return;
    if (to === undefined) {
      found.push(`${what} are no longer restricted (${fallbacks[1] ?? fallbacks[0]} removed).`);
      return;
    }
    // A new nonce or hash allows one known script; 'unsafe-inline' is judged on its own below.
    const wider = added(from, to).filter((s) => s !== "'nonce'" && s !== "'unsafe-inline'" && !/^'sha(256|384|512)-/.test(s));
    if (wider.length > 0) found.push(`${what}: now also allows ${wider.join(' ')}.`);
  };
  group('Scripts', SCRIPTS);
  const scriptsBefore = effective(was, SCRIPTS);
  const scriptsAfter = effective(now, SCRIPTS);
  if (scriptsBefore !== undefined && scriptsAfter !== undefined && !allowsInlineScript(scriptsBefore) && allowsInlineScript(scriptsAfter)) {
    found.push("Inline scripts now run ('unsafe-inline' without a nonce or hash).");
  }
  group('Frames', FRAMES);
  group('Connections (fetch, XHR, WebSocket)', CONNECTIONS);
  const ancestorsBefore = was.get('frame-ancestors');
  const ancestorsAfter = now.get('frame-ancestors');
  if (ancestorsBefore !== undefined && ancestorsAfter === undefined)
    found.push('The page may now be framed by any site (frame-ancestors removed).');
  const baseBefore = was.get('base-uri');
  if (baseBefore !== undefined && now.get('base-uri') === undefined)
    found.push('base-uri was removed (a <base> tag may redirect relative script URLs).');
  return found;
}
