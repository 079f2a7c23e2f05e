import crypto from 'node:crypto';
import { FormSessionReturnError, verifyFormSessionReturn } from './formSessions';

const SECRET = 'fss_test_' + 'k'.repeat(43);
const SESSION = 'fs_' + 'A'.repeat(32);
const NOW = new Date('2026-11-23T12:00:00Z');
const TS = Math.floor(NOW.getTime() / 1000);

const sign = (session: string, status: string, ts: number, secret = SECRET): string =>
  crypto.createHmac('sha256', secret).update(`${session}.${status}.${ts}`).digest('hex');

const url = (params: Record<string, string>): string => `https://shop.test/done?order=42&${new URLSearchParams(params).toString()}`;

describe('verifyFormSessionReturn', () => {
  it('accepts a redirect signed with the merchant’s secret and says which session and outcome it is', () => {
    const query = url({ session: SESSION, status: 'completed', timestamp: String(TS), signature: sign(SESSION, 'completed', TS) });
    expect(verifyFormSessionReturn(query, { signingSecret: SECRET, now: NOW })).toEqual({
      sessionId: SESSION,
      status: 'completed',
      signedAt: new Date(TS * 1000),
    });
  });

  it('refuses a changed status, another secret, an old redirect and a missing signature', () => {
    const good = { session: SESSION, status: 'canceled', timestamp: String(TS), signature: sign(SESSION, 'canceled', TS) };
    expect(() => verifyFormSessionReturn(url({ ...good, status: 'completed' }), { signingSecret: SECRET, now: NOW })).toThrow(
      FormSessionReturnError,
    );
    expect(() => verifyFormSessionReturn(url(good), { signingSecret: 'fss_test_other', now: NOW })).toThrow(/does not match/);
    const later = new Date(NOW.getTime() + 601_000);
    expect(() => verifyFormSessionReturn(url(good), { signingSecret: SECRET, now: later })).toThrow(/too old/);
    const { signature: _s, ...unsigned } = good;
    expect(() => verifyFormSessionReturn(url(unsigned), { signingSecret: SECRET, now: NOW })).toThrow(/signature/);
  });
});
