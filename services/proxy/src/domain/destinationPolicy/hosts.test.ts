import { canonicalHostPattern, TesseraError } from '@tessera/common';
import { assertHostOnAllowlist } from './hosts';
import { checkDestinationUrl } from './url';

function hostOf(url: string): string {
  return checkDestinationUrl(url, 'test').hostname;
}

function refusal(hostname: string, list: readonly string[]): TesseraError | undefined {
  try {
    assertHostOnAllowlist(hostname, list);
    return undefined;
  } catch (err) {
    return err as TesseraError;
  }
}

describe('merchant PSP host allowlist', () => {
  it('allows any host when the list is empty', () => {
    expect(refusal('evil.example', [])).toBeUndefined();
  });

  it('allows an exact host on the list and refuses others with psp_destination_forbidden on pspUrl', () => {
    expect(refusal(hostOf('https://api.stripe.com/v1/charges'), ['api.stripe.com'])).toBeUndefined();
    const err = refusal(hostOf('https://api.stripe.com.evil.test/'), ['api.stripe.com']);
    expect(err).toBeInstanceOf(TesseraError);
    expect(err?.code).toBe('psp_destination_forbidden');
    expect(err?.status).toBe(400);
    expect(err?.param).toBe('pspUrl');
    expect(err?.message).toContain("not on the merchant's PSP allowlist");
  });

  it('matches a wildcard against subdomains only, not the bare domain or look-alikes', () => {
    const list = ['*.adyen.com'];
    expect(refusal(hostOf('https://checkout-test.adyen.com/'), list)).toBeUndefined();
    expect(refusal(hostOf('https://a.b.adyen.com/'), list)).toBeUndefined();
    expect(refusal(hostOf('https://adyen.com/'), list)).toBeDefined();
    expect(refusal(hostOf('https://evil-adyen.com/'), list)).toBeDefined();
    expect(refusal(hostOf('https://adyen.com.evil.test/'), list)).toBeDefined();
  });

  it('compares case-insensitively and ignores a trailing dot and the port', () => {
    expect(refusal(hostOf('https://API.Stripe.COM.:8443/x'), ['api.stripe.com'])).toBeUndefined();
  });

  it('matches IP literal entries in the form the URL parser gives them, IPv4 and IPv6', () => {
    const v4 = canonicalHostPattern('127.0.0.1', { ipLiterals: true });
    const v6 = canonicalHostPattern('[0:0::1]', { ipLiterals: true });
    expect(v4).toEqual({ ok: true, value: '127.0.0.1' });
    expect(v6).toEqual({ ok: true, value: '::1' });
    expect(refusal(hostOf('http://127.0.0.1:9000/'), ['127.0.0.1'])).toBeUndefined();
    expect(refusal(hostOf('http://[::1]:9000/'), ['::1'])).toBeUndefined();
    // 2130706433 is 127.0.0.1 to the URL parser: the allowlist sees the real address.
    expect(refusal(hostOf('http://2130706433/'), ['127.0.0.1'])).toBeUndefined();
    expect(refusal(hostOf('http://127.0.0.2/'), ['127.0.0.1'])).toBeDefined();
  });

  it('matches internationalised names through their punycode form', () => {
    const entry = canonicalHostPattern('bücher.example', { ipLiterals: true });
    expect(entry).toEqual({ ok: true, value: 'xn--bcher-kva.example' });
    expect(refusal(hostOf('https://BÜCHER.example/'), ['xn--bcher-kva.example'])).toBeUndefined();
  });
});
