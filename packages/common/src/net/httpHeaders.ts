/** RFC 9110 section 5.1 `token`: the only characters a header field name may contain. */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 9110 section 5.5 field-value characters: visible ASCII, obs-text, space and tab. */
const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function isHttpToken(name: string): boolean {
  return HTTP_TOKEN.test(name);
}

export function isHttpFieldValue(value: string): boolean {
  return HTTP_FIELD_VALUE.test(value);
}

/**
 * Hop-by-hop headers (RFC 9110 section 7.6.1) describe one connection, not the message, so a
 * proxy never forwards them in either direction; `proxy-*` headers are for the hop too.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export function isHopByHopHeader(lowerCaseName: string): boolean {
  return HOP_BY_HOP.has(lowerCaseName) || lowerCaseName.startsWith('proxy-');
}
