import type { HeaderEntry } from './headers';

/** Headers that by convention carry credentials (RFC 9110 11.6.2, 11.7.2; cookies; API keys). */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-auth-token)$/i;
const AUTH_SCHEME = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s+\S/;

/**
 * For dry-run output: credential values are masked so a preview pasted into a ticket or a log
 * does not leak the merchant's PSP secret. The auth scheme (`Bearer`, `Basic`) stays visible
 * because a wrong scheme is a common integration mistake.
 */
export function maskCredentialHeaders(headers: readonly HeaderEntry[]): HeaderEntry[] {
  return headers.map(({ name, value }) => {
    if (!CREDENTIAL_HEADER.test(name)) return { name, value };
    const scheme = /authorization$/i.test(name) ? AUTH_SCHEME.exec(value)?.[1] : undefined;
    return { name, value: scheme ? `${scheme} ***` : '***' };
  });
}
