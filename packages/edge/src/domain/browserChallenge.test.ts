import { challengeBindingOf, challengeMaxNumber, isUnderPressure, matchesBinding } from './browserChallenge';

const config = { threshold: 600, base: 20_000, max: 2_000_000 };

describe('the proof of work of browser tokenization', () => {
  it('is demanded once the key reaches its threshold or is marked under attack, never when the threshold is 0', () => {
    expect(isUnderPressure(599, false, 600)).toBe(false);
    expect(isUnderPressure(600, false, 600)).toBe(true);
    expect(isUnderPressure(0, true, 600)).toBe(true);
    expect(isUnderPressure(10_000, true, 0)).toBe(false);
  });

  it("costs the base at the threshold, grows with the key's volume in thresholds, doubles per refusal of the address, and stops at the ceiling", () => {
    expect(challengeMaxNumber(0, 0, config)).toBe(20_000);
    expect(challengeMaxNumber(600, 0, config)).toBe(20_000);
    expect(challengeMaxNumber(1_800, 0, config)).toBe(60_000);
    expect(challengeMaxNumber(1_800, 3, config)).toBe(480_000);
    expect(challengeMaxNumber(60_000, 0, config)).toBe(2_000_000);
    expect(challengeMaxNumber(600, 1_000, config)).toBe(2_000_000);
  });

  it('binds a challenge to the key and the network (an IPv6 /64), with no address in clear', () => {
    const binding = challengeBindingOf('key_1', '2001:db8:1:2::1', 'hmac-key');
    expect(matchesBinding({ k: binding.keyId, n: binding.network }, challengeBindingOf('key_1', '2001:db8:1:2::ffff', 'hmac-key'))).toBe(
      true,
    );
    expect(matchesBinding({ k: binding.keyId, n: binding.network }, challengeBindingOf('key_1', '2001:db8:1:3::1', 'hmac-key'))).toBe(
      false,
    );
    expect(matchesBinding({ k: binding.keyId, n: binding.network }, challengeBindingOf('key_2', '2001:db8:1:2::1', 'hmac-key'))).toBe(
      false,
    );
    expect(binding.network).not.toContain('2001');
  });
});
