import { apiKeyBucket, failedAuthBucket, isOverLimit, rateLimitRefusal, retryAfterSeconds } from './rateLimit';

describe('rate limit rules', () => {
  it('rounds Retry-After up to whole seconds and never answers 0', () => {
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
    expect(retryAfterSeconds(59_500)).toBe(60);
  });

  it('refuses with a 429 whose message names the same whole-second wait it carries for Retry-After', () => {
    const refusal = rateLimitRefusal('Too many requests for this API key.', 1500);
    expect(refusal).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: 2 });
    expect(refusal.message).toBe('Too many requests for this API key. Try again in 2 seconds.');
    expect(rateLimitRefusal('Too many refused cards on this payment page.', 0).message).toBe(
      'Too many refused cards on this payment page. Try again in 1 second.',
    );
  });

  it('is over the limit only once the window has counted more hits than the limit, and never when the limit is 0', () => {
    expect(isOverLimit(30, 30)).toBe(false);
    expect(isOverLimit(31, 30)).toBe(true);
    expect(isOverLimit(1_000_000, 0)).toBe(false);
  });

  it('counts IPv4 clients per address, also when they arrive as IPv4-mapped IPv6', () => {
    expect(failedAuthBucket('203.0.113.7')).toBe('authfail:203.0.113.7');
    expect(failedAuthBucket('::ffff:203.0.113.7')).toBe('authfail:203.0.113.7');
    expect(failedAuthBucket('203.0.113.8')).not.toBe(failedAuthBucket('203.0.113.7'));
  });

  it('counts IPv6 clients per /64, so rotating through one network’s addresses does not reset the count', () => {
    expect(failedAuthBucket('2001:db8:1:2::1')).toBe(failedAuthBucket('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(failedAuthBucket('2001:db8:1:2::1')).toBe('authfail:2001:db8:1:2::/64');
    expect(failedAuthBucket('2001:db8:1:3::1')).not.toBe(failedAuthBucket('2001:db8:1:2::1'));
  });

  it('puts requests of unknown origin into one shared bucket', () => {
    expect(failedAuthBucket(undefined)).toBe('authfail:unknown');
    expect(failedAuthBucket('not an ip')).toBe('authfail:unknown');
  });

  it('names key buckets by key id, in the slot of the key’s merchant', () => {
    expect(apiKeyBucket({ merchantId: 'acme', id: 'key_abc' })).toBe('key:{m:acme}:key_abc');
  });
});
