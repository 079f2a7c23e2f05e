import crypto from 'node:crypto';
import { CompletionSignatureError, verifyCompletionSignature } from './completionSignature';

const SECRET = 'fss_test_' + 'k'.repeat(43);
const NOW = new Date('2026-11-26T12:00:00Z');
const TS = Math.floor(NOW.getTime() / 1000);
const BODY = JSON.stringify({ formSession: `fs_${'A'.repeat(32)}`, attempt: 1, token: 'tok.x', amount: 1234, currency: 'eur' });

/** Signed here independently of the SDK: HMAC-SHA256 over "<t>.<body>". */
const sign = (body: string, t = TS, secret = SECRET) =>
  `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;

const verify = (body: string | Buffer, header: string | undefined, secret = SECRET) =>
  verifyCompletionSignature(body, header, secret, { now: NOW });

describe('verifyCompletionSignature', () => {
  it('accepts a call signed with the secret and returns its body, from a string or a Buffer', () => {
    expect(verify(BODY, sign(BODY))).toMatchObject({ attempt: 1, amount: 1234 });
    expect(verify(Buffer.from(BODY), sign(BODY))).toMatchObject({ token: 'tok.x' });
    // A second v1 (while a secret is replaced) may sit beside the right one.
    expect(verify(BODY, `${sign(BODY)},v1=${'0'.repeat(64)}`)).toMatchObject({ attempt: 1 });
  });

  it.each([
    ['no header', BODY, undefined, /header is missing/],
    ['a malformed header', BODY, 'garbage', /malformed/],
    ['no timestamp', BODY, `v1=${'0'.repeat(64)}`, /timestamp/],
    ['no v1 signature', BODY, `t=${TS}`, /no v1 signature/],
    ['a changed body', BODY.replace('1234', '1'), sign(BODY), /does not match/],
    ['another secret', BODY, sign(BODY, TS, 'fss_test_other'), /does not match/],
    ['an old call', BODY, sign(BODY, TS - 301), /too old/],
    ['a call from the future', BODY, sign(BODY, TS + 120), /future/],
    ['a body that is not JSON', 'nope', sign('nope'), /not JSON/],
  ])('refuses %s with a CompletionSignatureError saying why', (_name, body, header, message) => {
    expect(() => verify(body, header)).toThrow(CompletionSignatureError);
    expect(() => verify(body, header)).toThrow(message);
  });

  it('throws a TypeError naming the mistake for a missing secret or a parsed body', () => {
    expect(() => verifyCompletionSignature(BODY, sign(BODY), undefined as unknown as string)).toThrow(/signingSecret is missing/);
    expect(() => verifyCompletionSignature({} as unknown as string, sign(BODY), SECRET)).toThrow(/raw request body/);
  });
});
