import { connectTargetOf, hostMatchesTarget, proxyPasswordOf, tunnelRequestHeaders } from './forwardProxyRequest';

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

describe('the forward proxy reading a CONNECT', () => {
  it('takes the secret key from the password of Proxy-Authorization: Basic, whatever the user', () => {
    expect(proxyPasswordOf(basic('x:tsk_test_abc'))).toBe('tsk_test_abc');
    expect(proxyPasswordOf(basic(':tsk_test_abc'))).toBe('tsk_test_abc');
    expect(proxyPasswordOf(`basic  ${Buffer.from('any user:tsk:with:colons').toString('base64')}`)).toBe('tsk:with:colons');
  });

  it('finds no key without the header, in another scheme, without a password or in bad base64', () => {
    for (const header of [undefined, 'Bearer tsk_test_abc', basic('tsk_test_abc'), basic('x:'), 'Basic !!!', 'Basic']) {
      expect(proxyPasswordOf(header)).toBeUndefined();
    }
  });

  it('takes a host name and port, lower case, and nothing else', () => {
    expect(connectTargetOf('API.PSP.test:443')).toEqual({ host: 'api.psp.test', port: 443, authority: 'api.psp.test:443' });
    expect(connectTargetOf('psp.test.:8443')).toEqual({ host: 'psp.test', port: 8443, authority: 'psp.test:8443' });
    for (const target of [
      undefined,
      'psp.test',
      '127.0.0.1:443',
      '[::1]:443',
      'psp.test:0',
      'psp.test:70000',
      'user@psp.test:443',
      'psp.test:443/x',
      '-psp.test:443',
    ]) {
      expect(connectTargetOf(target)).toBeUndefined();
    }
  });
});

describe('the forward proxy reading a request in a tunnel', () => {
  it('passes headers on in order, repeats kept, without Proxy-*, hop-by-hop, Connection-listed, Host and Content-Length', () => {
    const raw = [
      'Host',
      'psp.test',
      'Authorization',
      'Bearer sk_test_1',
      'Proxy-Authorization',
      'Basic eDp0c2s=',
      'Proxy-Connection',
      'keep-alive',
      'Connection',
      'keep-alive, X-Secret-Hop',
      'X-Secret-Hop',
      '1',
      'Keep-Alive',
      'timeout=5',
      'Content-Length',
      '10',
      'Stripe-Version',
      '2024-01-01',
      'Stripe-Version',
      'again',
    ];
    expect(tunnelRequestHeaders(raw)).toEqual([
      { name: 'Authorization', value: 'Bearer sk_test_1' },
      { name: 'Stripe-Version', value: '2024-01-01' },
      { name: 'Stripe-Version', value: 'again' },
    ]);
  });

  it('accepts a Host naming the CONNECT target (its port may be left out for 443), and no other', () => {
    const target = connectTargetOf('psp.test:443')!;
    expect(hostMatchesTarget(undefined, target)).toBe(true);
    expect(hostMatchesTarget('psp.test', target)).toBe(true);
    expect(hostMatchesTarget('PSP.test:443', target)).toBe(true);
    expect(hostMatchesTarget('other.test', target)).toBe(false);
    expect(hostMatchesTarget('psp.test:444', target)).toBe(false);
    const other = connectTargetOf('psp.test:8443')!;
    expect(hostMatchesTarget('psp.test', other)).toBe(false);
    expect(hostMatchesTarget('psp.test:8443', other)).toBe(true);
  });
});
