import { TesseraError } from '@tessera/common';
import { assertAddressesAllowed, parseCidrList } from './addresses';
import { checkDestinationUrl, parseMode } from './url';

function errorOf(fn: () => unknown): TesseraError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
  throw new Error('expected a TesseraError');
}

describe('checkDestinationUrl', () => {
  it('accepts an https URL in live mode and keeps host and port for logging', () => {
    const d = checkDestinationUrl('https://psp.example.com:8443/charge?secret=1', 'live');
    expect(d.hostname).toBe('psp.example.com');
    expect(d.isIpLiteral).toBe(false);
    expect(d.logHost).toBe('psp.example.com:8443');
  });

  it('accepts plain http in test mode', () => {
    expect(checkDestinationUrl('http://psp.example.com/charge', 'test').url.protocol).toBe('http:');
  });

  it('refuses plain http in live mode', () => {
    const err = errorOf(() => checkDestinationUrl('http://psp.example.com/charge', 'live'));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.param).toBe('pspUrl');
    expect(err.message).toMatch(/https/);
  });

  it.each(['ftp://psp.example.com/x', 'file:///etc/passwd', 'gopher://psp.example.com/', 'data:text/plain,hi'])(
    'refuses the non-http scheme in %s',
    (url) => {
      expect(errorOf(() => checkDestinationUrl(url, 'test')).code).toBe('psp_destination_forbidden');
    },
  );

  it('refuses URLs carrying a user name or password without echoing them', () => {
    const err = errorOf(() => checkDestinationUrl('https://user:s3cret@psp.example.com/', 'live'));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.message).not.toContain('s3cret');
    expect(errorOf(() => checkDestinationUrl('https://user@psp.example.com/', 'live')).code).toBe('psp_destination_forbidden');
  });

  it('answers parameter_invalid for text that is not a URL', () => {
    const err = errorOf(() => checkDestinationUrl('not a url', 'test'));
    expect(err.code).toBe('parameter_invalid');
    expect(err.param).toBe('pspUrl');
  });

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
  ])('normalises the IPv4 literal trick %s to %s so it is judged as loopback', (url, expected) => {
    const d = checkDestinationUrl(url, 'test');
    expect(d.hostname).toBe(expected);
    expect(d.isIpLiteral).toBe(true);
    expect(errorOf(() => assertAddressesAllowed([d.hostname], [], d.isIpLiteral)).message).toBe('pspUrl points to a loopback address.');
  });

  it('strips the brackets of an IPv6 literal, including a mapped IPv4 address', () => {
    const d = checkDestinationUrl('http://[::ffff:169.254.169.254]/latest/meta-data', 'test');
    expect(d.isIpLiteral).toBe(true);
    expect(errorOf(() => assertAddressesAllowed([d.hostname], [], true)).message).toBe('pspUrl points to a link-local address.');
  });
});

describe('assertAddressesAllowed', () => {
  it('says which kind of address a host name resolved to', () => {
    const err = errorOf(() => assertAddressesAllowed(['192.168.0.10'], [], false));
    expect(err.code).toBe('psp_destination_forbidden');
    expect(err.message).toBe('The pspUrl host resolves to a private address.');
    expect(err.message).not.toContain('192.168');
  });

  it('passes addresses inside the allowlist', () => {
    expect(() => assertAddressesAllowed(['127.0.0.1'], parseCidrList(['127.0.0.1/32']), true)).not.toThrow();
  });
});

describe('parseMode', () => {
  it('treats anything other than "test" as live, the stricter mode', () => {
    expect(parseMode('test')).toBe('test');
    expect(parseMode('live')).toBe('live');
    expect(parseMode('')).toBe('live');
  });
});
