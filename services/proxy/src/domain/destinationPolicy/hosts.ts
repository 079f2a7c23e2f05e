import { hostMatchesPatterns } from '@tessera/common';
import { forbidden } from './forbidden';

/**
 * The merchant's PSP host allowlist, checked on the URL's host before any DNS lookup or render,
 * so a merchant can pin its traffic to its own PSPs even if a key leaks. An empty list allows
 * any host (the address rules still apply either way). `hostname` is the URL's host as the
 * WHATWG parser gives it (lower case, punycode, IPv6 without brackets); the patterns were
 * canonicalised by the gateway with canonicalHostPattern.
 */
export function assertHostOnAllowlist(hostname: string, allowedHosts: readonly string[]): void {
  if (allowedHosts.length === 0 || hostMatchesPatterns(hostname, allowedHosts)) return;
  // The host is the caller's own input and carries no secret, but like the other destination
  // errors the message does not echo it.
  throw forbidden("The pspUrl host is not on the merchant's PSP allowlist.");
}
