import { cardFieldsCsp, corsAllowedOrigin, frameAncestorsOf } from './browserFields';

describe('card fields policy', () => {
  const policy = (allowedOrigins: string[]) =>
    cardFieldsCsp({ scriptHash: "'sha256-AAA='", styleHash: "'sha256-BBB='", apiOrigin: 'https://api.tessera.example', allowedOrigins });

  it('allows its own script and style by hash, sends only to the API, and is framed only by the key’s origins', () => {
    expect(policy(['https://shop.example', 'https://*.shop.example:8443'])).toBe(
      "default-src 'none'; script-src 'sha256-AAA='; style-src 'sha256-BBB='; connect-src https://api.tessera.example; " +
        "form-action 'none'; base-uri 'none'; frame-ancestors https://shop.example https://*.shop.example:8443",
    );
  });

  it('never lets a stored origin add a directive, and refuses framing when no origin is usable', () => {
    expect(frameAncestorsOf(["https://shop.example; script-src 'unsafe-inline'", 'https://ok.example'])).toBe('https://ok.example');
    expect(frameAncestorsOf(['*', 'https://shop.example/path'])).toBe("'none'");
    expect(policy([])).toContain("frame-ancestors 'none'");
  });
});

describe('CORS of the browser route', () => {
  it('echoes the fields origin and nothing else', () => {
    expect(corsAllowedOrigin('https://fields.tessera.example', 'https://fields.tessera.example')).toBe('https://fields.tessera.example');
    expect(corsAllowedOrigin('https://shop.example', 'https://fields.tessera.example')).toBeUndefined();
    expect(corsAllowedOrigin('null', 'https://fields.tessera.example')).toBeUndefined();
    expect(corsAllowedOrigin(undefined, 'https://fields.tessera.example')).toBeUndefined();
  });
});
