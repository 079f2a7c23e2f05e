/**
 * A PSP's answer is passed through, but the PSP is not Tessera and does not own the gateway's
 * origin. Two exceptions to "headers unchanged" (docs/api.md, docs/SECURITY.md):
 *
 * - Headers Tessera answers with to speak for itself (`x-tessera-*`, `x-request-id`,
 *   `idempotent-replayed`) are renamed `x-psp-<name>`: a PSP that sent `x-tessera-error` would
 *   otherwise make the SDK report its decline as a Tessera error, and its `x-request-id` would
 *   stand beside ours. Renamed rather than dropped, so the PSP's own ids stay there for debugging.
 * - Headers that set state in a browser for the whole origin are dropped: cookies, CORS grants,
 *   HSTS (ours applies), site-data clearing, alternative services and reporting endpoints. The
 *   gateway's origin can also serve the dashboard, whose session must not be touched by a PSP.
 */

/** Prefix of a PSP header renamed because its name is one of Tessera's. */
export const RENAMED_PSP_HEADER_PREFIX = 'x-psp-';

const TESSERA_NAMES = new Set(['x-request-id', 'idempotent-replayed']);

const ORIGIN_WIDE = new Set([
  'set-cookie',
  'set-cookie2',
  'strict-transport-security',
  'clear-site-data',
  'alt-svc',
  'nel',
  'report-to',
  'reporting-endpoints',
]);

/** The name a PSP response header is passed on under, or undefined when it is dropped. */
export function passedOnPspHeaderName(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (ORIGIN_WIDE.has(lower) || lower.startsWith('access-control-')) return undefined;
  return unlikeTesserasHeaderName(name);
}

/**
 * A PSP header under a name that cannot pass for one of Tessera's. The forward proxy passes every
 * other header as it is: there the client talks to the PSP's own origin, whose cookies are its own.
 */
export function unlikeTesserasHeaderName(name: string): string {
  const lower = name.toLowerCase();
  if (TESSERA_NAMES.has(lower) || lower.startsWith('x-tessera-')) return RENAMED_PSP_HEADER_PREFIX + lower;
  return name;
}
