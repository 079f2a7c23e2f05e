import { apiKeyStatus, isApiKeyExpired } from './apiKeys';

const now = new Date('2030-06-01T12:00:00.000Z');

describe('API key expiry (overlapping rotation)', () => {
  it('never expires a key without an expiry, such as every record written before expiries existed', () => {
    expect(isApiKeyExpired({}, now)).toBe(false);
    expect(apiKeyStatus({}, now)).toBe('active');
  });

  it('keeps a key active until its expiry and refuses it from that instant on', () => {
    expect(isApiKeyExpired({ expiresAt: '2030-06-01T12:00:00.001Z' }, now)).toBe(false);
    expect(isApiKeyExpired({ expiresAt: '2030-06-01T12:00:00.000Z' }, now)).toBe(true);
    expect(apiKeyStatus({ expiresAt: '2030-06-01T11:00:00.000Z' }, now)).toBe('expired');
  });

  it('treats an unreadable expiry as expired, failing closed', () => {
    expect(isApiKeyExpired({ expiresAt: 'tomorrow' }, now)).toBe(true);
  });

  it('reports a revoked key as revoked whatever its expiry', () => {
    expect(apiKeyStatus({ revokedAt: '2030-01-01T00:00:00.000Z', expiresAt: '2031-01-01T00:00:00.000Z' }, now)).toBe('revoked');
    expect(apiKeyStatus({ revokedAt: '2030-01-01T00:00:00.000Z', expiresAt: '2029-01-01T00:00:00.000Z' }, now)).toBe('revoked');
  });
});
