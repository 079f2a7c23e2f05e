import { maskCredentialHeaders } from './maskHeaders';

describe('maskCredentialHeaders', () => {
  it('masks credential values but keeps the auth scheme, and leaves other headers alone', () => {
    expect(
      maskCredentialHeaders([
        { name: 'Authorization', value: 'Bearer sk_live_secret' },
        { name: 'proxy-authorization', value: 'Basic dXNlcjpwYXNz' },
        { name: 'Authorization', value: 'opaque-secret' },
        { name: 'X-Api-Key', value: 'k_123' },
        { name: 'Cookie', value: 'session=abc' },
        { name: 'Content-Type', value: 'application/json' },
      ]),
    ).toEqual([
      { name: 'Authorization', value: 'Bearer ***' },
      { name: 'proxy-authorization', value: 'Basic ***' },
      { name: 'Authorization', value: '***' },
      { name: 'X-Api-Key', value: '***' },
      { name: 'Cookie', value: '***' },
      { name: 'Content-Type', value: 'application/json' },
    ]);
  });
});
