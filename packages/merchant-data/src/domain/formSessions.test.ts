import { verifyFormSessionReturn } from '../../../../packages/sdk/src/formSessions';
import {
  formSessionStatus,
  formSigningSecret,
  hostedPageCsp,
  newFormSessionId,
  signedReturnLocation,
  FORM_SESSION_ID_PATTERN,
} from './formSessions';

const NOW = new Date('2026-11-23T12:00:00Z');

describe('form sessions', () => {
  it('have unguessable ids of one shape', () => {
    const a = newFormSessionId();
    expect(a).toMatch(FORM_SESSION_ID_PATTERN);
    expect(newFormSessionId()).not.toBe(a);
  });

  it('read as expired once open past their expiry, and keep a finished status', () => {
    expect(formSessionStatus({ status: 'open', expiresAt: '2026-11-23T12:30:00Z' }, NOW)).toBe('open');
    expect(formSessionStatus({ status: 'open', expiresAt: '2026-11-23T12:00:00Z' }, NOW)).toBe('expired');
    expect(formSessionStatus({ status: 'completed', expiresAt: '2026-11-23T11:00:00Z' }, NOW)).toBe('completed');
  });

  it('sign returns so that the Node SDK verifies them with the merchant’s secret of that mode only', () => {
    const id = newFormSessionId();
    const secret = formSigningSecret('pepper-'.repeat(6), 'shop', 'test');
    expect(secret).toMatch(/^fss_test_[A-Za-z0-9_-]{43}$/);
    expect(formSigningSecret('pepper-'.repeat(6), 'shop', 'live')).not.toBe(secret);
    expect(formSigningSecret('pepper-'.repeat(6), 'other', 'test')).not.toBe(secret);
    const location = signedReturnLocation(secret, 'https://shop.test/done?order=42&amount=1', id, 'completed', NOW);
    expect(verifyFormSessionReturn(location, { signingSecret: secret, now: NOW })).toMatchObject({ sessionId: id, status: 'completed' });
    const other = formSigningSecret('pepper-'.repeat(6), 'other', 'test');
    expect(() => verifyFormSessionReturn(location, { signingSecret: other, now: NOW })).toThrow(/does not match/);
  });

  it('sign the whole return URL, so the merchant’s own query cannot be changed on the way back', () => {
    const secret = formSigningSecret('pepper-'.repeat(6), 'shop', 'test');
    const location = new URL(
      signedReturnLocation(secret, 'https://shop.test/done?order=42&amount=1', newFormSessionId(), 'completed', NOW),
    );
    expect(verifyFormSessionReturn(location, { signingSecret: secret, now: NOW }).query.toString()).toBe('order=42&amount=1');
    location.searchParams.set('amount', '1000');
    expect(() => verifyFormSessionReturn(location, { signingSecret: secret, now: NOW })).toThrow(/does not match/);
  });

  it('give the page a policy that is never framed and submits only to itself and the return origins', () => {
    const csp = hostedPageCsp({
      scriptHash: "'sha256-a'",
      styleHash: "'sha256-b'",
      redirectOrigins: ['https://shop.test', 'https://shop.test'],
    });
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' https://shop.test;");
    expect(csp).toContain("default-src 'none'");
  });
});
