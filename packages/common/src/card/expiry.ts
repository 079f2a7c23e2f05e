/**
 * A card is valid through the last day of its expiry month. We judge "the month has ended" in
 * UTC-12, the time zone whose clock is earliest, so a card still valid anywhere on Earth is
 * never refused as expired.
 */
const EARLIEST_ZONE_OFFSET_MS = -12 * 60 * 60 * 1000;

/**
 * The latest expiry accepted, in years after the current one: cards are issued for 2-10 years, so
 * 20 leaves room for any real card while refusing a typo (`2205`) or a made-up expiry that would
 * keep a record, and its token, alive for half a century.
 */
export const MAX_YEARS_AHEAD = 20;

/** Year and month (1-12) as seen on the clock in UTC-12. */
function calendarInEarliestZone(now: Date): { year: number; month: number } {
  const shifted = new Date(now.getTime() + EARLIEST_ZONE_OFFSET_MS);
  return { year: shifted.getUTCFullYear(), month: shifted.getUTCMonth() + 1 };
}

export function isExpired(expiryMonth: number, expiryYear: number, now: Date = new Date()): boolean {
  const { year, month } = calendarInEarliestZone(now);
  return expiryYear < year || (expiryYear === year && expiryMonth < month);
}

export function isTooFarAhead(expiryYear: number, now: Date = new Date()): boolean {
  return expiryYear > calendarInEarliestZone(now).year + MAX_YEARS_AHEAD;
}

/**
 * The instant the expiry month has ended everywhere: the first moment of the next month in
 * UTC-12. Card records are kept until then (plus a grace period).
 */
export function expiryMonthEnd(expiryMonth: number, expiryYear: number): Date {
  const startOfNextMonthUtc = Date.UTC(expiryYear, expiryMonth, 1); // month index is 0-based: this is month+1
  return new Date(startOfNextMonthUtc - EARLIEST_ZONE_OFFSET_MS);
}
