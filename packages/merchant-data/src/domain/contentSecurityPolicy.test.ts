import { parsePolicy, policyWeakenings } from './contentSecurityPolicy';

const STRICT =
  "default-src 'self'; script-src 'nonce-abc' https://fields.tessera.test; frame-src https://fields.tessera.test; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'";

describe('policyWeakenings (PCI DSS 11.6.1: a weaker payment-page header is flagged)', () => {
  it('parses directives case-insensitively and keeps the first of a repeated one', () => {
    const policy = parsePolicy("Script-Src 'self'; script-src *; img-src data:");
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('img-src')).toEqual(['data:']);
  });

  it('finds nothing when only the nonce changes or a source is removed', () => {
    expect(policyWeakenings(STRICT, STRICT.replace('nonce-abc', 'nonce-xyz'))).toEqual([]);
    expect(policyWeakenings(STRICT, STRICT.replace(" connect-src 'self';", " connect-src 'none';"))).toEqual([]);
  });

  it("flags a removed script-src, a new script host, 'unsafe-inline' without nonce, and a wider frame-src", () => {
    expect(policyWeakenings(STRICT, STRICT.replace("script-src 'nonce-abc' https://fields.tessera.test; ", ''))).toEqual([
      "Scripts: now also allows 'self'.",
    ]);
    expect(policyWeakenings("script-src 'self'", 'img-src *')).toEqual(['Scripts are no longer restricted (script-src removed).']);
    expect(policyWeakenings(STRICT, STRICT.replace('script-src', 'script-src https://evil.example'))).toEqual([
      'Scripts: now also allows https://evil.example.',
    ]);
    expect(policyWeakenings("script-src 'self'", "script-src 'self' 'unsafe-inline'")).toEqual([
      "Inline scripts now run ('unsafe-inline' without a nonce or hash).",
    ]);
    // With a nonce, 'unsafe-inline' is ignored by browsers (CSP3): no weaker.
    expect(policyWeakenings("script-src 'nonce-a'", "script-src 'nonce-b' 'unsafe-inline'")).toEqual([]);
    expect(policyWeakenings(STRICT, STRICT.replace('frame-src https://fields.tessera.test', 'frame-src *'))).toEqual([
      'Frames: now also allows *.',
    ]);
  });

  it('flags a policy that disappears, and compares nothing before a first one', () => {
    expect(policyWeakenings(STRICT, null)).toEqual(['The page no longer sends a Content-Security-Policy.']);
    expect(policyWeakenings(null, 'script-src *')).toEqual([]);
  });
});
