import { maskCredentialHeaders } from './maskHeaders';

describe('maskCredentialHeaders', () => {
  it('masks credential values but keeps the auth scheme, and leaves other headers alone', () => {
    // [name, value sent, value shown]
    const headers: Array<[string, string, string]> = [
      ['Authorization', 'Bearer sk_live_secret', 'Bearer ***'],
      ['proxy-authorization', 'Basic dXNlcjpwYXNz', 'Basic ***'],
      ['Authorization', 'opaque-secret', '***'],
      ['X-Api-Key', 'k_123', '***'],
      ['Cookie', 'session=abc', '***'],
      ['Content-Type', 'application/json', 'application/json'],
    ];
    expect(maskCredentialHeaders(headers.map(([name, value]) => ({ name, value })))).toEqual(
      headers.map(([name, , value]) => ({ name, value })),
    );
  });
});
