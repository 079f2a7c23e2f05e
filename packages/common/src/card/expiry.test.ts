import { expiryMonthEnd, isExpired, isTooFarAhead } from './expiry';

describe('isExpired', () => {
  it('accepts a card on the last day of its expiry month', () => {
    expect(isExpired(3, 2027, new Date('2027-03-31T12:00:00Z'))).toBe(false);
  });

  it('keeps a card valid until its month has ended in UTC-12, the last zone to leave it', () => {
    // 2027-04-01T11:59Z is still 2027-03-31 23:59 in UTC-12.
    expect(isExpired(3, 2027, new Date('2027-04-01T11:59:59Z'))).toBe(false);
    expect(isExpired(3, 2027, new Date('2027-04-01T12:00:00Z'))).toBe(true);
  });

  it('handles the turn of the year', () => {
    expect(isExpired(12, 2026, new Date('2027-01-01T11:59:59Z'))).toBe(false);
    expect(isExpired(12, 2026, new Date('2027-01-01T12:00:00Z'))).toBe(true);
    expect(isExpired(1, 2027, new Date('2027-01-01T12:00:00Z'))).toBe(false);
  });

  it('rejects earlier months and years', () => {
    const now = new Date('2026-11-23T00:00:00Z');
    expect(isExpired(10, 2026, now)).toBe(true);
    expect(isExpired(12, 2025, now)).toBe(true);
    expect(isExpired(11, 2026, now)).toBe(false);
  });
});

describe('isTooFarAhead', () => {
  it('allows at most 20 years ahead', () => {
    const now = new Date('2026-11-23T00:00:00Z');
    expect(isTooFarAhead(2046, now)).toBe(false);
    expect(isTooFarAhead(2047, now)).toBe(true);
    expect(isTooFarAhead(2076, now)).toBe(true);
  });

  it('counts the years in UTC-12, like expiry, so the cap never moves ahead of any time zone', () => {
    // 2027-01-01T11:59Z is still 2026 in UTC-12.
    expect(isTooFarAhead(2047, new Date('2027-01-01T11:59:59Z'))).toBe(true);
    expect(isTooFarAhead(2047, new Date('2027-01-01T12:00:00Z'))).toBe(false);
  });
});

describe('expiryMonthEnd', () => {
  it('is the first instant of the next month in UTC-12', () => {
    expect(expiryMonthEnd(3, 2027).toISOString()).toBe('2027-04-01T12:00:00.000Z');
    expect(expiryMonthEnd(12, 2026).toISOString()).toBe('2027-01-01T12:00:00.000Z');
  });

  it('agrees with isExpired at the boundary', () => {
    const end = expiryMonthEnd(2, 2028);
    expect(isExpired(2, 2028, new Date(end.getTime() - 1))).toBe(false);
    expect(isExpired(2, 2028, end)).toBe(true);
  });
});
