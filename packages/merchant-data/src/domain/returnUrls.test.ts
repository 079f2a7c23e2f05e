import { canonicalReturnUrlEntry, checkReturnUrl, returnLocation } from './returnUrls';

const REGISTERED = ['https://shop.test/checkout/done', 'http://127.0.0.1:8443/back'];

describe('registering a return URL', () => {
  it('keeps scheme, host, port and path in canonical form', () => {
    expect(canonicalReturnUrlEntry('HTTPS://Shop.TEST:443/checkout/done')).toEqual({ ok: true, value: 'https://shop.test/checkout/done' });
    expect(canonicalReturnUrlEntry('http://127.0.0.1:8443/back')).toEqual({ ok: true, value: 'http://127.0.0.1:8443/back' });
  });

  it.each([
    ['https://shop.test/done?x=1', /query/],
    ['https://shop.test/done#top', /fragment/],
    ['https://user:pw@shop.test/done', /credentials/],
    ['javascript:alert(1)', /absolute http/],
    ['//shop.test/done', /absolute http/],
    ['https://shop%2etest/done', /percent-encode the host/],
    ['https://shоp.test/done', /ASCII/],
  ])('refuses %s', (raw, message) => {
    const result = canonicalReturnUrlEntry(raw);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(message);
  });
});

describe('a form session’s return URL', () => {
  it('matches a registered URL exactly and keeps the merchant’s query', () => {
    expect(checkReturnUrl('https://shop.test/checkout/done?order=42', REGISTERED, 'live')).toEqual({
      ok: true,
      url: 'https://shop.test/checkout/done?order=42',
    });
  });

  it.each([
    'https://shop.test.evil/checkout/done',
    'https://shop.test@evil.test/checkout/done',
    'https://shop.test%40evil.test/checkout/done',
    'https://shop.test%2eevil/checkout/done',
    '//evil.test/checkout/done',
    'https:\\\\evil.test/checkout/done',
    'https:/\\evil.test/checkout/done',
    'https%3A%2F%2Fevil.test%2Fcheckout%2Fdone',
    'https://shop.test/checkout/done/../../evil',
    'https://shop.test/checkout/%2e%2e/done',
    'https://shop.test/checkout/done#x',
    'https://sh\top.test/checkout/done',
    'https://shop.test/checkout/done\n',
    ' https://shop.test/checkout/done',
    'https://shоp.test/checkout/done',
    'https://xn--shp-ild.test/checkout/done',
    'HTTPS://shop.test/checkout/done',
    'https://SHOP.test/checkout/done',
    'https://shop.test:443/checkout/done',
    'https://shop.test/checkout/done/',
    'https://shop.test/checkout/DONE',
    'http://shop.test/checkout/done',
    'https://shop.test:8443/checkout/done',
  ])('refuses %j', (raw) => {
    expect(checkReturnUrl(raw, REGISTERED, 'test').ok).toBe(false);
  });

  it('needs https for live keys even when an http URL is registered', () => {
    expect(checkReturnUrl('http://127.0.0.1:8443/back', REGISTERED, 'test').ok).toBe(true);
    expect(checkReturnUrl('http://127.0.0.1:8443/back', REGISTERED, 'live')).toEqual({ ok: false, message: 'must be https for live keys' });
  });

  it('sets the result parameters, replacing any of the same name the merchant used', () => {
    expect(returnLocation('https://shop.test/done?order=42&status=x', { session: 'fs_1', status: 'completed' })).toBe(
      'https://shop.test/done?order=42&status=completed&session=fs_1',
    );
  });
});
