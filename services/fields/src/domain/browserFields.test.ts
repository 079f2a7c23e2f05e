import { cardFieldsCsp, frameAncestorsOf, isFromFieldsPage } from './browserFields';

describe('card fields policy', () => {
  const policy = (allowedOrigins: string[]) => cardFieldsCsp({ scriptHash: "'sha256-AAA='", styleHash: "'sha256-BBB='", allowedOrigins });

  it('allows its own script and style by hash and its own fonts, sends only to its own origin, and is framed only by the key’s origins', () => {
    expect(policy(['https://shop.example', 'https://*.shop.example:8443'])).toBe(
      "default-src 'none'; script-src 'sha256-AAA='; style-src 'sha256-BBB='; font-src 'self'; connect-src 'self'; " +
        "form-action 'none'; base-uri 'none'; frame-ancestors https://shop.example https://*.shop.example:8443",
    );
  });

  it('never lets a stored origin add a directive, and refuses framing when no origin is usable', () => {
    expect(frameAncestorsOf(["https://shop.example; script-src 'unsafe-inline'", 'https://ok.example'])).toBe('https://ok.example');
    expect(frameAncestorsOf(['*', 'https://shop.example/path'])).toBe("'none'");
    expect(policy([])).toContain("frame-ancestors 'none'");
  });
});

describe('callers of the browser routes', () => {
  const fields = 'https://fields.tessera.example';
  it('are pages of the fields origin and nothing else', () => {
    expect(isFromFieldsPage({ origin: fields, secFetchSite: 'same-origin' }, fields)).toBe(true);
    expect(isFromFieldsPage({ origin: fields, secFetchSite: undefined }, fields)).toBe(true);
    expect(isFromFieldsPage({ origin: 'https://shop.example', secFetchSite: 'cross-site' }, fields)).toBe(false);
    expect(isFromFieldsPage({ origin: 'https://shop.example', secFetchSite: 'same-origin' }, fields)).toBe(false);
    expect(isFromFieldsPage({ origin: 'null', secFetchSite: undefined }, fields)).toBe(false);
    expect(isFromFieldsPage({ origin: undefined, secFetchSite: undefined }, fields)).toBe(false);
  });

  it('take a same-origin GET, which browsers send without Origin, by Sec-Fetch-Site', () => {
    expect(isFromFieldsPage({ origin: undefined, secFetchSite: 'same-origin' }, fields)).toBe(true);
    expect(isFromFieldsPage({ origin: undefined, secFetchSite: 'cross-site' }, fields)).toBe(false);
  });
});
