import { canonicalHostPattern, type HostPatternResult } from '@tessera/common';

export const MAX_PSP_HOSTS = 100;

/**
 * One entry of a merchant's PSP host allowlist: the API-key domain rules (exact host or
 * `*.example.com`), plus IP literals, since a PSP (or a test double) may be reached by address.
 * The proxy compares the URL's host against these canonical forms.
 */
export function canonicalPspHostEntry(raw: string): HostPatternResult {
  return canonicalHostPattern(raw, { ipLiterals: true });
}
