import { verifyCompletionSignature } from '@tessera/sdk';
import { hostedPageCsp, MAX_DECLINE_MESSAGE_LENGTH, readCompletionAnswer, signedCompletionCall } from './formSessions';

describe('the completion call', () => {
  const call = {
    formSession: `fs_${'a'.repeat(32)}`,
    attempt: 1,
    token: 'tok.x',
    card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2030 },
    amount: 1234,
    currency: 'eur',
  };

  it('is signed so that the SDK’s verifyCompletionSignature accepts it with the same secret only', () => {
    const now = new Date();
    const { body, signature } = signedCompletionCall('fss_test_secret', call, now);
    expect(JSON.parse(body)).toEqual(call);
    expect(verifyCompletionSignature(body, signature, 'fss_test_secret', { now })).toEqual(call);
    expect(() => verifyCompletionSignature(body, signature, 'fss_test_other', { now })).toThrow(/does not match/);
  });

  it.each([
    [200, '{"outcome":"succeeded"}', { outcome: 'succeeded' }],
    [200, '{"outcome":"declined","message":"Insufficient funds"}', { outcome: 'declined', message: 'Insufficient funds' }],
    [200, '{"outcome":"declined"}', { outcome: 'declined', message: 'Your card was declined. Try another card.' }],
    [200, '{"outcome":"maybe"}', { outcome: 'unknown', reason: 'no known outcome' }],
    [200, 'ok', { outcome: 'unknown', reason: 'body is not JSON' }],
    [200, 'null', { outcome: 'unknown', reason: 'no known outcome' }],
    [201, '{"outcome":"succeeded"}', { outcome: 'unknown', reason: 'status 201' }],
    [500, '{"outcome":"declined"}', { outcome: 'unknown', reason: 'status 500' }],
  ])('reads status %d with %s strictly', (status, body, expected) => {
    expect(readCompletionAnswer(status, body)).toEqual(expected);
  });

  it('keeps a decline message to one line of bounded length', () => {
    const answer = readCompletionAnswer(200, JSON.stringify({ outcome: 'declined', message: `a\nb${'x'.repeat(500)}` }));
    expect(answer.outcome === 'declined' && answer.message.length).toBe(MAX_DECLINE_MESSAGE_LENGTH);
    expect(answer.outcome === 'declined' && answer.message.startsWith('a b')).toBe(true);
  });
});

describe('hostedPageCsp', () => {
  it('allows images from the logo’s origin only, and none without a logo', () => {
    const base = { scriptHash: "'sha256-a'", styleHash: "'sha256-b'", redirectOrigins: ['https://shop.test'] };
    expect(hostedPageCsp(base)).not.toContain('img-src');
    expect(hostedPageCsp({ ...base, imageOrigin: 'https://cdn.shop.test' })).toContain('img-src https://cdn.shop.test;');
  });
});
