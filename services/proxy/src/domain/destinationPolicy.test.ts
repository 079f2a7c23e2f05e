import { TesseraError } from '@tessera/common';
import { createDestinationPolicy, parseCidrList, parsePortList } from './destinationPolicy';

/** The error `check` throws, which must be a TesseraError. */
function refusal(check: () => unknown): TesseraError {
  let thrown: unknown;
  try {
    check();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(TesseraError);
  return thrown as TesseraError;
}

const policy = createDestinationPolicy({ allowedCidrs: parseCidrList(['10.20.30.0/24']), allowedPorts: parsePortList(['8443']) });

describe('the URL decision (checkUrl)', () => {
  it('passes an allowed URL and says where it goes, without any DNS', () => {
    const d = policy.checkUrl('https://api.psp.example:8443/charges?key=secret', 'live', ['*.psp.example']);
    expect(d).toMatchObject({ hostname: 'api.psp.example', isIpLiteral: false, logHost: 'api.psp.example:8443' });
  });

  it('refuses with psp_destination_forbidden on pspUrl: scheme, live http, credentials, unlisted host, port', () => {
    const cases: Array<[string, 'test' | 'live', string[], RegExp]> = [
      ['ftp://api.psp.example/', 'test', [], /http or https scheme/],
      ['http://api.psp.example/', 'live', [], /only send to https/],
      ['https://u:p@api.psp.example/', 'live', [], /user name or password/],
      ['https://other.example/', 'live', ['api.psp.example'], /not on the merchant's PSP allowlist/],
      ['https://api.psp.example:22/', 'live', [], /port 22; PSPs are reached only on ports 443, 80, 8443/],
    ];
    for (const [url, mode, hosts, message] of cases) {
      const err = refusal(() => policy.checkUrl(url, mode, hosts));
      expect(err).toMatchObject({ code: 'psp_destination_forbidden', param: 'pspUrl' });
      expect(err.message).toMatch(message);
    }
  });

  it('judges the URL first, then the merchant allowlist, then the port', () => {
    expect(refusal(() => policy.checkUrl('http://other.example:22/', 'live', ['api.psp.example'])).message).toMatch(/https/);
    expect(refusal(() => policy.checkUrl('https://other.example:22/', 'live', ['api.psp.example'])).message).toMatch(/allowlist/);
  });

  it('answers parameter_invalid for text that is not a URL', () => {
    expect(refusal(() => policy.checkUrl('not a url', 'test', []))).toMatchObject({ code: 'parameter_invalid', param: 'pspUrl' });
  });

  it('leaves addresses to the address decision: a private IP literal passes the URL decision', () => {
    expect(policy.checkUrl('https://10.1.2.3/', 'live', []).isIpLiteral).toBe(true);
  });
});

describe('the address decision (checkAddresses)', () => {
  it('passes global unicast addresses and those in PSP_ALLOWED_CIDRS', () => {
    expect(() => policy.checkAddresses(['93.184.216.34', '2606:2800:220:1::1', '10.20.30.40'], false)).not.toThrow();
  });

  it('refuses the whole answer when one address is not public, saying what kind it is and not which', () => {
    const err = refusal(() => policy.checkAddresses(['93.184.216.34', '10.1.2.3'], false));
    expect(err).toMatchObject({ code: 'psp_destination_forbidden', message: 'The pspUrl host resolves to a private address.' });
    expect(refusal(() => policy.checkAddresses(['169.254.169.254'], true)).message).toBe('pspUrl points to a link-local address.');
  });
});

describe('the port rule (checkPort)', () => {
  it('passes 443, 80 and PSP_ALLOWED_PORTS only', () => {
    for (const port of [443, 80, 8443]) expect(() => policy.checkPort(port)).not.toThrow();
    expect(refusal(() => policy.checkPort(6379)).code).toBe('psp_destination_forbidden');
  });
});
