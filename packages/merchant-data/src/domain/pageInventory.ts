import { createHash } from 'node:crypto';
import { maskCardNumbers, TesseraError } from '@tessera/common';
import { MAX_POLICY_LENGTH, policyWeakenings } from './contentSecurityPolicy';

/**
 * The script inventory of a merchant's payment pages (PCI DSS 4.0.1 6.4.3: every script on the page
 * that embeds the card fields is inventoried, authorized and justified; 11.6.1: changes to those
 * scripts and to the page's security headers are detected). tessera.js reports from the page what
 * it sees; these rules turn a report into the page's inventory and a history of changes.
 *
 * Nothing here may hold card data: the reporter never reads inputs or the card iframe, and every
 * string kept is cut to size and passed through maskCardNumbers, so a card number typed into a
 * URL or a policy by a hostile page is stored masked.
 */

/** A hostile page must not fill Redis: at most this many pages per merchant and mode, scripts per page, events per page. */
export const PAGE_INVENTORY_LIMITS = {
  pagesPerMerchant: 100,
  scriptsPerPage: 200,
  eventsPerPage: 500,
  violationsPerPage: 200,
  /** Scripts looked at in one report; the rest is counted as dropped. */
  scriptsPerReport: 300,
  urlLength: 1024,
} as const;

/** Kept this long after the last report of a page (PCI DSS 10.5.1 keeps audit evidence a year). */
export const PAGE_INVENTORY_RETENTION_SECONDS = 400 * 86_400;

/** A CSP-style hash (`sha256-…`) or an SRI `integrity` value (one or more `shaNNN-…`). */
const HASH_LIST = /^sha(256|384|512)-[A-Za-z0-9+/]{20,}={0,2}( sha(256|384|512)-[A-Za-z0-9+/]{20,}={0,2})*$/;

/** Query parameters whose value is never kept: they name keys, tokens, sessions and signatures. */
const SECRET_PARAMETER = /(key|token|secret|sig|signature|auth|session|sess|password|passwd|pwd|code|credential|jwt|nonce|hmac|otp)/i;

export type HashSource = 'integrity' | 'fetched' | 'inline' | 'none';

/** One script as a report names it. `key`: the external URL as kept, or `inline:<hash>`. */
export interface ReportedScript {
  key: string;
  /** Null for an inline script. */
  url: string | null;
  /** `sha256-…` (fetched or inline) or the `integrity` attribute; null: could not be hashed (cross-origin, no integrity). */
  hash: string | null;
  hashSource: HashSource;
}

export interface PageReport {
  origin: string;
  path: string;
  scripts: ReportedScript[];
  /** The page's `<meta http-equiv="Content-Security-Policy">` policies, joined with `, ` (as headers combine); null: none. */
  metaPolicy: string | null;
  scriptsDropped: number;
}

export interface PageRecord {
  /** A short digest of origin and path: the page's name in Redis and in admin URLs. */
  id: string;
  origin: string;
  path: string;
  firstSeenAt: string;
  lastSeenAt: string;
  reports: number;
  /** The meta policy of the last report; null: none. */
  policy: string | null;
  /** The first meta policy seen: the baseline when an operator has accepted none. */
  firstPolicy: string | null;
  /** The last policy a CSP violation report carried (the response header, which script cannot read). */
  headerPolicy: string | null;
  headerPolicySeenAt: string | null;
  /** The first header policy seen: its baseline when an operator has accepted none (absent in records before it was kept). */
  firstHeaderPolicy?: string | null;
  /** More scripts were seen than PAGE_INVENTORY_LIMITS.scriptsPerPage: the rest are not listed. */
  scriptsCapped: boolean;
}

export interface ScriptRecord {
  key: string;
  url: string | null;
  inline: boolean;
  hash: string | null;
  hashSource: HashSource;
  firstSeenAt: string;
  lastSeenAt: string;
  /** Whether the last report of the page had it. */
  present: boolean;
  /** The hash before the last change, when it changed. */
  previousHash: string | null;
  changedAt: string | null;
}

export type PageEventKind =
  'page_first_seen' | 'script_added' | 'script_changed' | 'script_removed' | 'policy_changed' | 'policy_weakened' | 'scripts_capped';

export interface PageEvent {
  at: string;
  kind: PageEventKind;
  /** The script's key (URL or `inline:<hash>`), for script events. */
  script?: string;
  detail: string;
}

export interface CspViolation {
  at: string;
  /** Where the page was: origin and path, never the query. */
  documentUrl: string;
  /** The blocked resource (URL with secret-looking query values removed) or a keyword: `inline`, `eval`, `data`. */
  blockedUrl: string;
  directive: string;
  disposition: 'enforce' | 'report';
  sourceFile: string | null;
  line: number | null;
}

/** The page's id: the first 16 hex digits of SHA-256 of origin + path (one page, one id, across reports). */
export function pageIdOf(origin: string, path: string): string {
  return createHash('sha256').update(`${origin}${path}`).digest('hex').slice(0, 16);
}

export const PAGE_ID_PATTERN = /^[0-9a-f]{16}$/;

const cut = (text: string, max: number): string => maskCardNumbers(text.slice(0, max));

/**
 * A script or blocked URL as kept: no fragment, the values of secret-looking query parameters
 * replaced by `redacted`, card-number-like digit runs masked, at most urlLength characters.
 * Not a URL (a CSP keyword such as `inline`): the word, cut short.
 */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return cut(raw.replace(/[^A-Za-z0-9:-]/g, ''), 32);
  }
  url.hash = '';
  url.username = '';
  url.password = '';
  for (const name of [...new Set(url.searchParams.keys())]) {
    if (SECRET_PARAMETER.test(name)) url.searchParams.set(name, 'redacted');
  }
  return cut(url.toString(), PAGE_INVENTORY_LIMITS.urlLength);
}

/** `https://shop.example/checkout` from any URL of the page: origin and path, no query (it may hold an order or a session). */
export function pageLocationOf(raw: string): { origin: string; path: string } | undefined {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return { origin: url.origin, path: cut(url.pathname, 512) };
  } catch {
    return undefined;
  }
}

const invalid = (message: string): TesseraError => new TesseraError('parameter_invalid', { message, param: 'report' });

function scriptOf(raw: unknown): ReportedScript | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { src, integrity, sha256 } = raw as Record<string, unknown>;
  const hashOf = (value: unknown): string | null =>
    typeof value === 'string' && value.length <= 300 && HASH_LIST.test(value.trim()) ? value.trim() : null;
  if (typeof src === 'string' && src !== '') {
    const url = redactUrl(src);
    const fromIntegrity = hashOf(integrity);
    const fetched = hashOf(typeof sha256 === 'string' ? `sha256-${sha256}` : undefined);
    const hash = fromIntegrity ?? fetched;
    return { key: url, url, hash, hashSource: fromIntegrity ? 'integrity' : fetched ? 'fetched' : 'none' };
  }
  const inline = hashOf(typeof sha256 === 'string' ? `sha256-${sha256}` : undefined);
  return inline === null ? undefined : { key: `inline:${inline}`, url: null, hash: inline, hashSource: 'inline' };
}

/**
 * A report as tessera.js sends it (`{ page, scripts: [{ src?, integrity?, sha256? }], csp: [policy…] }`),
 * from a page whose origin the request proved (`origin`: the key's allowed origin that sent it).
 * A page URL of another origin is refused: a page reports only itself.
 */
export function parsePageReport(raw: unknown, origin: string): PageReport {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('A page report is a JSON object.');
  const body = raw as Record<string, unknown>;
  const location = typeof body.page === 'string' ? pageLocationOf(body.page) : undefined;
  if (location === undefined) throw invalid('"page" must be the page URL.');
  if (location.origin !== origin) throw invalid('"page" must be on the origin that sends the report.');
  const rawScripts = Array.isArray(body.scripts) ? body.scripts : [];
  const scripts = new Map<string, ReportedScript>();
  for (const entry of rawScripts.slice(0, PAGE_INVENTORY_LIMITS.scriptsPerReport)) {
    const script = scriptOf(entry);
    if (script !== undefined && !scripts.has(script.key)) scripts.set(script.key, script);
  }
  const policies = (Array.isArray(body.csp) ? body.csp : [])
    .filter((p): p is string => typeof p === 'string' && p.trim() !== '')
    .slice(0, 8)
    .map((p) => p.trim());
  const metaPolicy = policies.length === 0 ? null : cut(policies.join(', '), MAX_POLICY_LENGTH);
  return {
    ...location,
    scripts: [...scripts.values()],
    metaPolicy,
    scriptsDropped: Math.max(0, rawScripts.length - PAGE_INVENTORY_LIMITS.scriptsPerReport),
  };
}

export interface PageState {
  page: PageRecord | undefined;
  scripts: ReadonlyMap<string, ScriptRecord>;
}

export interface PageUpdate {
  page: PageRecord;
  /** Script records to write (new, changed, seen again, or no longer present). */
  scripts: ScriptRecord[];
  events: PageEvent[];
}

const label = (script: { url: string | null; key: string }): string => script.url ?? script.key;

/**
 * The page after one report: first/last seen, hashes, presence; and the changes an operator must
 * see (11.6.1). The first report of a page is one `page_first_seen` event, not one per script.
 * A hash that a report cannot give (unhashable) does not count as a change of a known one.
 */
export function applyPageReport(state: PageState, report: PageReport, now: Date): PageUpdate {
  const at = now.toISOString();
  const before = state.page;
  const first = before === undefined;
  const events: PageEvent[] = [];
  const page: PageRecord = before
    ? { ...before, lastSeenAt: at, reports: before.reports + 1, policy: report.metaPolicy }
    : {
        id: pageIdOf(report.origin, report.path),
        origin: report.origin,
        path: report.path,
        firstSeenAt: at,
        lastSeenAt: at,
        reports: 1,
        policy: report.metaPolicy,
        firstPolicy: report.metaPolicy,
        headerPolicy: null,
        headerPolicySeenAt: null,
        firstHeaderPolicy: null,
        scriptsCapped: false,
      };
  const writes: ScriptRecord[] = [];
  let stored = state.scripts.size;
  const seen = new Set<string>();
  for (const script of report.scripts) {
    seen.add(script.key);
    const known = state.scripts.get(script.key);
    if (known === undefined) {
      if (stored >= PAGE_INVENTORY_LIMITS.scriptsPerPage) {
        if (!page.scriptsCapped) {
          page.scriptsCapped = true;
          events.push({
            at,
            kind: 'scripts_capped',
            detail: `More than ${PAGE_INVENTORY_LIMITS.scriptsPerPage} scripts: the rest are not listed.`,
          });
        }
        continue;
      }
      stored++;
      writes.push({
        ...script,
        inline: script.url === null,
        firstSeenAt: at,
        lastSeenAt: at,
        present: true,
        previousHash: null,
        changedAt: null,
      });
      if (!first) events.push({ at, kind: 'script_added', script: script.key, detail: `New script: ${label(script)}` });
      continue;
    }
    const changed = script.hash !== null && known.hash !== null && script.hash !== known.hash;
    const next: ScriptRecord = {
      ...known,
      lastSeenAt: at,
      present: true,
      hash: script.hash ?? known.hash,
      hashSource: script.hash === null ? known.hashSource : script.hashSource,
      ...(changed ? { previousHash: known.hash, changedAt: at } : {}),
    };
    writes.push(next);
    if (changed)
      events.push({
        at,
        kind: 'script_changed',
        script: script.key,
        detail: `Script changed: ${label(script)} (was ${known.hash}, now ${script.hash})`,
      });
    else if (!known.present)
      events.push({ at, kind: 'script_added', script: script.key, detail: `Script back on the page: ${label(script)}` });
  }
  for (const known of state.scripts.values()) {
    if (seen.has(known.key) || !known.present) continue;
    writes.push({ ...known, present: false });
    events.push({ at, kind: 'script_removed', script: known.key, detail: `Script no longer on the page: ${label(known)}` });
  }
  if (first) {
    events.push({ at, kind: 'page_first_seen', detail: `First report of ${page.origin}${page.path}: ${report.scripts.length} scripts.` });
  } else if ((before.policy ?? '') !== (report.metaPolicy ?? '')) {
    const weaker = policyWeakenings(before.policy, report.metaPolicy);
    events.push(
      weaker.length > 0
        ? { at, kind: 'policy_weakened', detail: `Content-Security-Policy weakened: ${weaker.join(' ')}` }
        : { at, kind: 'policy_changed', detail: 'Content-Security-Policy changed (no weaker).' },
    );
  }
  // A page that had no meta policy at first gets the first one it shows as its baseline.
  if (page.firstPolicy === null && report.metaPolicy !== null) page.firstPolicy = report.metaPolicy;
  return { page, scripts: writes, events };
}

/** The CSP violation report formats browsers send: report-uri's `application/csp-report` and the Reporting API's `application/reports+json`. */
export type CspReportFormat = 'csp-report' | 'reports+json';

export interface ParsedViolation {
  violation: CspViolation;
  /** The page's origin and path, from the report's document URL: which page, and whether the key allows that origin. */
  origin: string;
  path: string;
  /** The policy the browser enforced (the header, which the page's script cannot read). */
  originalPolicy: string | null;
}

const str = (value: unknown, max: number): string | null => (typeof value === 'string' && value !== '' ? cut(value, max) : null);

function violationOf(
  body: Record<string, unknown>,
  names: Record<'document' | 'blocked' | 'directive' | 'policy' | 'source' | 'line', string>,
  now: Date,
) {
  const documentUrl = typeof body[names.document] === 'string' ? pageLocationOf(body[names.document] as string) : undefined;
  if (documentUrl === undefined) return undefined;
  const blocked = typeof body[names.blocked] === 'string' ? redactUrl(body[names.blocked] as string) : '';
  const source = typeof body[names.source] === 'string' ? redactUrl(body[names.source] as string) : null;
  const line = body[names.line];
  const violation: CspViolation = {
    at: now.toISOString(),
    documentUrl: `${documentUrl.origin}${documentUrl.path}`,
    blockedUrl: blocked,
    directive: str(body[names.directive], 64) ?? 'unknown',
    disposition: body.disposition === 'report' ? 'report' : 'enforce',
    sourceFile: source,
    line: typeof line === 'number' && Number.isInteger(line) && line >= 0 ? line : null,
  };
  return { violation, ...documentUrl, originalPolicy: str(body[names.policy], MAX_POLICY_LENGTH) };
}

/**
 * The violations in one POST to the CSP report endpoint; malformed entries are skipped. The
 * script sample (`script-sample`, `sample`) is never kept: it is a piece of the page's code or an
 * attribute value, and could hold anything the page held.
 */
export function parseCspReports(format: CspReportFormat, raw: unknown, now: Date): ParsedViolation[] {
  if (typeof raw !== 'object' || raw === null) return [];
  if (format === 'csp-report') {
    const report = (raw as Record<string, unknown>)['csp-report'];
    if (typeof report !== 'object' || report === null) return [];
    const parsed = violationOf(
      report as Record<string, unknown>,
      {
        document: 'document-uri',
        blocked: 'blocked-uri',
        directive: 'effective-directive',
        policy: 'original-policy',
        source: 'source-file',
        line: 'line-number',
      },
      now,
    );
    return parsed ? [parsed] : [];
  }
  if (!Array.isArray(raw)) return [];
  return raw.slice(0, 20).flatMap((entry) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { type, body } = entry as Record<string, unknown>;
    if (type !== 'csp-violation' || typeof body !== 'object' || body === null) return [];
    const parsed = violationOf(
      body as Record<string, unknown>,
      {
        document: 'documentURL',
        blocked: 'blockedURL',
        directive: 'effectiveDirective',
        policy: 'originalPolicy',
        source: 'sourceFile',
        line: 'lineNumber',
      },
      now,
    );
    return parsed ? [parsed] : [];
  });
}

/**
 * The page as a violation report shows it: a page no report named yet (tessera.js blocked, or its
 * reporter switched off) is listed from its violations; the policy the browser enforced is kept as
 * the page's header policy, and a weaker one than before is an event, as for the meta policy.
 */
export function applyViolation(
  page: PageRecord | undefined,
  parsed: ParsedViolation,
  now: Date,
): { page: PageRecord; events: PageEvent[] } {
  const at = now.toISOString();
  const events: PageEvent[] = [];
  const next: PageRecord = page
    ? { ...page }
    : {
        id: pageIdOf(parsed.origin, parsed.path),
        origin: parsed.origin,
        path: parsed.path,
        firstSeenAt: at,
        lastSeenAt: at,
        reports: 0,
        policy: null,
        firstPolicy: null,
        headerPolicy: null,
        headerPolicySeenAt: null,
        firstHeaderPolicy: null,
        scriptsCapped: false,
      };
  if (parsed.originalPolicy !== null) {
    if (next.headerPolicy !== null && next.headerPolicy !== parsed.originalPolicy) {
      const weaker = policyWeakenings(next.headerPolicy, parsed.originalPolicy);
      events.push(
        weaker.length > 0
          ? { at, kind: 'policy_weakened', detail: `Content-Security-Policy header weakened: ${weaker.join(' ')}` }
          : { at, kind: 'policy_changed', detail: 'Content-Security-Policy header changed (no weaker).' },
      );
    }
    next.headerPolicy = parsed.originalPolicy;
    next.headerPolicySeenAt = at;
    next.firstHeaderPolicy ??= parsed.originalPolicy;
  }
  return { page: next, events };
}
