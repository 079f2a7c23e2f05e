import { createHash } from 'node:crypto';
import {
  browserIpBucket,
  browserKeyBucket,
  recentKeyVolume,
  volumeMinuteOf,
  cardFingerprint,
  cardFingerprintKey,
  distinctCardsBucket,
  isNewCardOverLimit,
} from './browserLimits';

describe('card-testing limit rules', () => {
  it('counts shoppers per IPv4 address and per IPv6 /64, and keys by id', () => {
    expect(browserIpBucket('203.0.113.7')).toBe('browser:ip:203.0.113.7');
    expect(browserIpBucket('::ffff:203.0.113.7')).toBe('browser:ip:203.0.113.7');
    expect(distinctCardsBucket('2001:db8:1:2::1')).toBe(distinctCardsBucket('2001:db8:1:2:ffff::9'));
    expect(distinctCardsBucket('2001:db8:1:3::1')).not.toBe(distinctCardsBucket('2001:db8:1:2::1'));
    expect(browserIpBucket(undefined)).toBe('browser:ip:unknown');
    expect(browserKeyBucket('key_abc', volumeMinuteOf(120_000))).toBe('browser:key:key_abc:2');
    expect(volumeMinuteOf(179_999)).toBe(2);
  });

  it("prices a challenge by the key's recent volume: never below the last minute's, growing with this one's from its start", () => {
    expect(recentKeyVolume(0, 0, 0)).toBe(0);
    expect(recentKeyVolume(0, 600, 0)).toBe(600);
    expect(recentKeyVolume(0, 600, 59_000)).toBe(600);
    expect(recentKeyVolume(60, 600, 6_000)).toBe(600);
    expect(recentKeyVolume(120, 600, 6_000)).toBe(660);
    expect(recentKeyVolume(900, 600, 30_000)).toBe(1_200);
    expect(recentKeyVolume(900, 0, 30_000)).toBe(900);
  });

  it('fingerprints a card by a keyed hash: stable per number and secret, different across numbers and secrets, never the number', () => {
    const key = cardFingerprintKey('server-secret-server-secret-0123456789');
    const visa = cardFingerprint(key, '4242424242424242');
    expect(cardFingerprint(key, '4242 4242 4242 4242')).toBe(visa);
    expect(cardFingerprint(key, '5555555555554444')).not.toBe(visa);
    expect(cardFingerprint(cardFingerprintKey('another-secret-another-secret-0123456'), '4242424242424242')).not.toBe(visa);
    expect(visa).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(visa).not.toContain('4242');
    // Not the plain hash of the number (which anyone could recompute for every possible PAN).
    expect(visa).not.toBe(createHash('sha256').update('4242424242424242').digest('base64url').slice(0, 22));
  });

  it('lets a card already counted through at any count, refuses a new card once the limit is reached, and never when the limit is 0', () => {
    expect(isNewCardOverLimit(false, 2, 3)).toBe(false);
    expect(isNewCardOverLimit(false, 3, 3)).toBe(true);
    expect(isNewCardOverLimit(true, 3, 3)).toBe(false);
    expect(isNewCardOverLimit(false, 1000, 0)).toBe(false);
  });
});
