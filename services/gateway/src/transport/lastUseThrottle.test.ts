import { createLastUseThrottle } from '@tessera/edge';

describe('last-use bookkeeping throttle', () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 8, 0, 0) + ms);

  it('records the first use of a key and skips repeats from the same address within the interval', () => {
    const shouldRecord = createLastUseThrottle(1000);
    expect(shouldRecord('key_a', at(0), '203.0.113.10')).toBe(true);
    expect(shouldRecord('key_a', at(400), '203.0.113.10')).toBe(false);
    expect(shouldRecord('key_a', at(999), '203.0.113.10')).toBe(false);
    expect(shouldRecord('key_a', at(1000), '203.0.113.10')).toBe(true);
  });

  it('records at once when the same key is used from another address', () => {
    const shouldRecord = createLastUseThrottle(1000);
    expect(shouldRecord('key_a', at(0), '203.0.113.10')).toBe(true);
    expect(shouldRecord('key_a', at(10), '198.51.100.7')).toBe(true);
  });

  it('tracks every key on its own', () => {
    const shouldRecord = createLastUseThrottle(1000);
    expect(shouldRecord('key_a', at(0), undefined)).toBe(true);
    expect(shouldRecord('key_b', at(1), undefined)).toBe(true);
    expect(shouldRecord('key_a', at(2), undefined)).toBe(false);
  });
});
