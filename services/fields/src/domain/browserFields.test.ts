import { cardFieldsCsp, fieldsRefusalOf, frameAncestorsOf, isFromFieldsPage, refusalCsp } from './browserFields';

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

describe('refusing the fields page', () => {
  const key = { allowedOrigins: ['https://shop.example', 'https://*.shop.example'] };

  it('names the reason: no usable key, or a claimed page origin the key does not allow', () => {
    expect(fieldsRefusalOf(undefined, 'https://shop.example')).toBe('api_key_invalid');
    expect(fieldsRefusalOf(key, 'https://evil.example')).toBe('origin_not_allowed');
    expect(fieldsRefusalOf(key, 'https://shop.example:8443')).toBe('origin_not_allowed');
    expect(fieldsRefusalOf(key, 'https://shop.example/')).toBe('origin_not_allowed');
    expect(fieldsRefusalOf(key, 'https://shop.example')).toBeUndefined();
    expect(fieldsRefusalOf(key, 'https://pay.shop.example')).toBeUndefined();
    // No claim (an older tessera.js): frame-ancestors alone decides.
    expect(fieldsRefusalOf(key, undefined)).toBeUndefined();
  });

  it('lets any page frame the refusal page, which runs its one script and loads nothing', () => {
    expect(refusalCsp({ scriptHash: "'sha256-AAA='", styleHash: "'sha256-BBB='" })).toBe(
      "default-src 'none'; script-src 'sha256-AAA='; style-src 'sha256-BBB='; form-action 'none'; base-uri 'none'; frame-ancestors *",
    );
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
