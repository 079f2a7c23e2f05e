/**
 * The SAQ A kit's reporter (docs/browser.md, "SAQ A kit"): tessera.js tells Tessera which scripts
 * the merchant's payment page runs and which Content-Security-Policy it declares, so the dashboard
 * can keep the page's script inventory and flag a new or changed script or a weaker policy (PCI DSS
 * 4.0.1 6.4.3 and 11.6.1, which FAQ 1588 applies to pages that embed a payment iframe).
 *
 * What it reads: each <script> element's src, integrity and type, the text of inline scripts (only
 * to hash it), <meta http-equiv="Content-Security-Policy"> and the page's origin and path. Never an
 * input's value, a form, cookies, storage, or anything of the card iframe (which it could not read).
 * Once per page load, then again (debounced, a few times at most) when scripts are added.
 */

/** Names of query parameters whose value is not sent: keys, tokens, sessions, signatures. */
const SECRET_PARAMETER = /(key|token|secret|sig|signature|auth|session|sess|password|passwd|pwd|code|credential|jwt|nonce|hmac|otp)/i;
/** Script types a browser runs; anything else (JSON-LD, templates) is data. */
const EXECUTABLE_TYPES = ['', 'text/javascript', 'application/javascript', 'module', 'text/ecmascript', 'application/ecmascript'];
const DEBOUNCE_MS = 2000;
/** Reports after the first, per page load: a page that keeps adding scripts is not reported forever. */
const MAX_FOLLOW_UPS = 5;
const MAX_SCRIPTS = 300;
/** Scripts hashed by fetching them (same-origin ones without `integrity`): bounded, they cost a request each. */
const MAX_FETCHED = 30;
/** keepalive bodies are limited to 64 KiB in total per page. */
const KEEPALIVE_LIMIT = 60_000;

export interface ReportedScript {
  src?: string;
  integrity?: string;
  /** Base64 SHA-256 of the script's text (inline) or of its body (fetched same-origin scripts). */
  sha256?: string;
}

export interface PageReportBody {
  page: string;
  scripts: ReportedScript[];
  csp: string[];
}

/** What one <script> element shows, as plain data (tests build it without a DOM). */
export interface ScriptElementFacts {
  src: string;
  integrity: string;
  type: string;
  text: string;
}

export function isExecutableScriptType(type: string): boolean {
  return EXECUTABLE_TYPES.includes(type.trim().toLowerCase());
}

/** The script URL as sent: no fragment, secret-looking query values replaced (the server redacts again). */
export function redactScriptUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.hash = '';
    url.username = '';
    url.password = '';
    const names: string[] = [];
    url.searchParams.forEach((_value, name) => {
      if (SECRET_PARAMETER.test(name) && names.indexOf(name) < 0) names.push(name);
    });
    for (const name of names) url.searchParams.set(name, 'redacted');
    return url.toString();
  } catch {
    return '';
  }
}

function base64(bytes: ArrayBuffer): string {
  let binary = '';
  const view = new Uint8Array(bytes);
  for (let i = 0; i < view.length; i++) binary += String.fromCharCode(view[i] as number);
  return btoa(binary);
}

/** Base64 SHA-256 (as CSP's `'sha256-…'` and SRI write it), or undefined without Web Crypto (not a secure context). */
export async function sha256Base64(data: string | ArrayBuffer): Promise<string | undefined> {
  const subtle = typeof crypto !== 'undefined' ? crypto.subtle : undefined;
  if (subtle === undefined) return undefined;
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  return base64(await subtle.digest('SHA-256', bytes));
}

/**
 * One script as reported. An external script is identified by its URL and hashed by its
 * `integrity` attribute; without one, a same-origin script (or tessera.js's own origin) is fetched
 * from the cache and hashed. A cross-origin script without `integrity` is reported unhashed: its
 * body cannot be read without CORS, and fetching it would need `connect-src` for that host; the
 * dashboard marks it "unhashable" (the fix is an `integrity` attribute, which PCI DSS 6.4.3 wants).
 */
export async function describeScript(
  facts: ScriptElementFacts,
  page: { origin: string; fieldsOrigin: string },
  fetchBody: (url: string) => Promise<ArrayBuffer | undefined>,
  budget: { fetches: number },
): Promise<ReportedScript | undefined> {
  if (!isExecutableScriptType(facts.type)) return undefined;
  if (facts.src === '') {
    const sha256 = await sha256Base64(facts.text);
    return sha256 === undefined ? undefined : { sha256 };
  }
  const src = redactScriptUrl(facts.src);
  if (src === '') return undefined;
  if (facts.integrity.trim() !== '') return { src, integrity: facts.integrity.trim() };
  let origin = '';
  try {
    origin = new URL(facts.src).origin;
  } catch {
    return { src };
  }
  if ((origin !== page.origin && origin !== page.fieldsOrigin) || budget.fetches <= 0) return { src };
  budget.fetches--;
  const body = await fetchBody(facts.src).catch(() => undefined);
  const sha256 = body === undefined ? undefined : await sha256Base64(body);
  return sha256 === undefined ? { src } : { src, sha256 };
}

/** The page's own view of its scripts and meta policies; nothing else of the DOM is read. */
function pageFacts(): { scripts: ScriptElementFacts[]; csp: string[] } {
  const scripts: ScriptElementFacts[] = [];
  const elements = document.getElementsByTagName('script');
  for (let i = 0; i < elements.length && scripts.length < MAX_SCRIPTS; i++) {
    const el = elements[i] as HTMLScriptElement;
    scripts.push({ src: el.src, integrity: el.integrity ?? '', type: el.type, text: el.src === '' ? (el.textContent ?? '') : '' });
  }
  const csp: string[] = [];
  const metas = document.querySelectorAll('meta[http-equiv]');
  for (let i = 0; i < metas.length; i++) {
    const meta = metas[i] as HTMLMetaElement;
    if (meta.httpEquiv.toLowerCase() === 'content-security-policy' && meta.content.trim() !== '') csp.push(meta.content.trim());
  }
  return { scripts, csp };
}

async function fetchSameOrigin(url: string): Promise<ArrayBuffer | undefined> {
  // From the cache where the page already loaded it: no new download in the usual case.
  const res = await fetch(url, { cache: 'force-cache', credentials: 'same-origin' });
  return res.ok ? res.arrayBuffer() : undefined;
}

async function buildReport(fieldsOrigin: string, budget: { fetches: number }): Promise<PageReportBody> {
  const { scripts, csp } = pageFacts();
  const page = { origin: location.origin, fieldsOrigin };
  const described = await Promise.all(scripts.map((s) => describeScript(s, page, fetchSameOrigin, budget).catch(() => undefined)));
  return {
    page: location.origin + location.pathname,
    scripts: described.filter((s): s is ReportedScript => s !== undefined),
    csp,
  };
}

/** A report's scripts in a comparable form: a follow-up is sent only when they changed. */
const fingerprint = (report: PageReportBody): string =>
  JSON.stringify([report.scripts.map((s) => `${s.src ?? ''} ${s.integrity ?? ''} ${s.sha256 ?? ''}`).sort(), report.csp]);

function send(url: string, report: PageReportBody): void {
  const body = JSON.stringify(report);
  // no-cors and text/plain: no preflight, no answer read, and no console error for the missing CORS header.
  void fetch(url, {
    method: 'POST',
    mode: 'no-cors',
    credentials: 'omit',
    keepalive: body.length < KEEPALIVE_LIMIT,
    headers: { 'content-type': 'text/plain;charset=UTF-8' },
    body,
  }).catch(() => undefined);
}

let started = false;

/**
 * Starts the page's reporting, once per page load whatever the number of Tessera() calls: a first
 * report when the page has loaded, then one per batch of added <script> elements (debounced,
 * at most MAX_FOLLOW_UPS) when the scripts differ from the last report. Never throws.
 */
export function startPageReports(publishableKey: string, fieldsOrigin: string): void {
  if (started || typeof document === 'undefined' || typeof fetch !== 'function') return;
  started = true;
  const url = `${fieldsOrigin}/v1/browser/page-reports?key=${encodeURIComponent(publishableKey)}`;
  const budget = { fetches: MAX_FETCHED };
  let last = '';
  let followUps = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const report = (): void => {
    buildReport(fieldsOrigin, budget)
      .then((body) => {
        const print = fingerprint(body);
        if (print === last) return;
        last = print;
        send(url, body);
      })
      .catch(() => undefined);
  };
  const whenLoaded = (): void => {
    report();
    if (typeof MutationObserver !== 'function') return;
    const observer = new MutationObserver((mutations) => {
      const addsScript = mutations.some((m) => Array.prototype.some.call(m.addedNodes, (n: Node) => n.nodeName === 'SCRIPT'));
      if (!addsScript) return;
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = undefined;
        if (++followUps >= MAX_FOLLOW_UPS) observer.disconnect();
        report();
      }, DEBOUNCE_MS);
    });
    observer.observe(document.documentElement, { childList: true, subtree: true });
  };
  if (document.readyState === 'complete') setTimeout(whenLoaded, 0);
  else window.addEventListener('load', whenLoaded, { once: true });
}
