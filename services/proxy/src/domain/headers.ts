import { isHopByHopHeader, isHttpFieldValue, isHttpToken, TesseraError } from '@tessera/common';

export interface HeaderEntry {
  name: string;
  value: string;
}

/** Headers named in a Connection header are hop-by-hop for that message too. */
function connectionListed(headers: readonly HeaderEntry[]): Set<string> {
  const listed = new Set<string>();
  for (const h of headers) {
    if (h.name.toLowerCase() !== 'connection') continue;
    for (const token of h.value.split(',')) {
      const t = token.trim().toLowerCase();
      if (t !== '') listed.add(t);
    }
  }
  return listed;
}

// undici rejects header names and values outside the RFC 9110 grammar; we want a 400 rather
// than an internal error when a caller sends such a header.

/**
 * The headers sent to the PSP: the caller's pspHeaders minus hop-by-hop headers, and minus
 * host, content-length and expect, which the HTTP client computes (or, for expect, does not
 * support). Order and repeated names are kept.
 */
export function filterRequestHeaders(headers: readonly HeaderEntry[]): HeaderEntry[] {
  for (const h of headers) {
    if (!isHttpToken(h.name)) {
      throw new TesseraError('parameter_invalid', { param: 'pspHeaders', message: 'pspHeaders contains an invalid header name.' });
    }
    if (!isHttpFieldValue(h.value)) {
      throw new TesseraError('parameter_invalid', {
        param: 'pspHeaders',
        message: 'pspHeaders contains a header value with characters not allowed in HTTP headers.',
      });
    }
  }
  const listed = connectionListed(headers);
  return headers.filter((h) => {
    const lower = h.name.toLowerCase();
    return !isHopByHopHeader(lower) && !listed.has(lower) && lower !== 'host' && lower !== 'content-length' && lower !== 'expect';
  });
}

/**
 * The PSP's headers as passed back: hop-by-hop headers and content-length removed (the body
 * is re-framed by whoever sends it on), everything else in the PSP's order, repeats kept.
 */
export function filterResponseHeaders(headers: readonly HeaderEntry[]): HeaderEntry[] {
  const listed = connectionListed(headers);
  return headers.filter((h) => {
    const lower = h.name.toLowerCase();
    return !isHopByHopHeader(lower) && !listed.has(lower) && lower !== 'content-length';
  });
}

/**
 * Pairs a flat [name, value, name, value, ...] list, as undici's raw response headers come.
 * Buffers are decoded as undici's own parser does: names as UTF-8, values as latin1.
 */
export function pairRawHeaders(raw: readonly (Buffer | string)[]): HeaderEntry[] {
  const out: HeaderEntry[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as Buffer | string;
    const value = raw[i + 1] as Buffer | string;
    out.push({
      name: typeof name === 'string' ? name : name.toString(),
      value: typeof value === 'string' ? value : value.toString('latin1'),
    });
  }
  return out;
}

/**
 * The Content-Type among the caller's headers (names are case-insensitive), or "" if none. Two of
 * them (`content-type` and `Content-Type`) are refused: the vault would encode the body for one
 * while the PSP receives both and may read the other.
 */
export function findContentType(headers: readonly HeaderEntry[]): string {
  const found = headers.filter((h) => h.name.toLowerCase() === 'content-type');
  if (found.length > 1) {
    throw new TesseraError('parameter_invalid', {
      param: 'pspHeaders',
      message: 'pspHeaders has more than one Content-Type header (header names are case-insensitive): send it once.',
    });
  }
  return found[0]?.value ?? '';
}
