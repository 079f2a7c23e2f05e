import { loginBlock, loginBuckets, locksAfterFailure, lockoutPolicy } from './lockout';

describe('sign-in lockout rules', () => {
  const policy = lockoutPolicy({ ADMIN_LOGIN_WINDOW_SECONDS: 3600, ADMIN_LOGIN_MAX_PER_ACCOUNT: 10 });

  it('locks the account after 10 failures for 30 minutes, and a source after 5 against that account', () => {
    expect(policy).toEqual({ windowMs: 3_600_000, lockoutMs: 1_800_000, maxPerAccount: 10, maxPerSource: 5 });
    expect(locksAfterFailure({ account: 9, source: 4 }, policy)).toEqual({ account: false, source: false });
    expect(locksAfterFailure({ account: 9, source: 5 }, policy)).toEqual({ account: false, source: true });
    expect(locksAfterFailure({ account: 10, source: 1 }, policy)).toEqual({ account: true, source: false });
  });

  it('always blocks a source before it alone can lock the account', () => {
    for (const max of [2, 3, 5, 10]) {
      const p = lockoutPolicy({ ADMIN_LOGIN_WINDOW_SECONDS: 60, ADMIN_LOGIN_MAX_PER_ACCOUNT: max, ADMIN_LOGIN_MAX_PER_SOURCE: 50 });
      expect(p.maxPerSource).toBeLessThan(p.maxPerAccount);
    }
  });

  it('keeps the account lock from a trusted device, never a source block', () => {
    expect(loginBlock({ accountLockMs: 1000, sourceLockMs: 0, trustedDevice: false })).toEqual({ by: 'account', retryInMs: 1000 });
    expect(loginBlock({ accountLockMs: 1000, sourceLockMs: 0, trustedDevice: true })).toBeUndefined();
    expect(loginBlock({ accountLockMs: 1000, sourceLockMs: 500, trustedDevice: true })).toEqual({ by: 'source', retryInMs: 500 });
    expect(loginBlock({ accountLockMs: 0, sourceLockMs: 0, trustedDevice: false })).toBeUndefined();
  });

  it('counts a source per account: an address blocked for one account is not blocked for another, and a device is its own source', () => {
    const a = loginBuckets('ops@acme.test', { ip: '198.51.100.7' });
    const b = loginBuckets('other@acme.test', { ip: '198.51.100.7' });
    const device = loginBuckets('ops@acme.test', { ip: '198.51.100.7', deviceId: 'dev1' });
    expect(a.account).not.toBe(b.account);
    expect(a.source).not.toBe(b.source);
    expect(device.source).not.toBe(a.source);
    expect(device.account).toBe(a.account);
    expect(JSON.stringify([a, b, device])).not.toMatch(/acme|198\.51/);
  });
});
