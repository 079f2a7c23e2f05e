import { isHopByHopHeader, isHttpFieldValue, isHttpToken } from './httpHeaders';

describe('HTTP header rules', () => {
  it('accepts RFC 9110 tokens as header names and refuses separators, spaces and empty names', () => {
    expect(isHttpToken('X-Custom_Header.1')).toBe(true);
    expect(isHttpToken("!#$%&'*+-.^_`|~")).toBe(true);
    for (const bad of ['', 'X Custom', 'X:Custom', 'X-Évil', 'a\r\nb']) expect(isHttpToken(bad)).toBe(false);
  });

  it('accepts visible characters, obs-text, space and tab in values and refuses CR, LF and NUL', () => {
    expect(isHttpFieldValue('Bearer sk_123 \tcafé'.replace('é', '\xe9'))).toBe(true);
    expect(isHttpFieldValue('')).toBe(true);
    for (const bad of ['a\rb', 'a\nb', 'a\0b', 'snow ☃']) expect(isHttpFieldValue(bad)).toBe(false);
  });

  it('treats connection-scoped headers and every proxy-* header as hop-by-hop', () => {
    for (const name of ['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authenticate']) {
      expect(isHopByHopHeader(name)).toBe(true);
    }
    for (const name of ['content-type', 'content-length', 'set-cookie', 'x-proxy-id']) expect(isHopByHopHeader(name)).toBe(false);
  });
});
