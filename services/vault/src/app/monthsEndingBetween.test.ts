import { monthsEndingBetween } from './eventSweeps';

describe('monthsEndingBetween', () => {
  it("includes a month whose end (noon UTC on the next month's first day) is still ahead early on that day", () => {
    const at = Date.UTC(2027, 0, 1, 5);
    expect(monthsEndingBetween(at, at + 40 * 86_400_000)).toEqual([
      { expiryMonth: 12, expiryYear: 2026 },
      { expiryMonth: 1, expiryYear: 2027 },
    ]);
  });

  it('leaves out a month that ended before the window and one that ends after it', () => {
    const at = Date.UTC(2027, 0, 1, 13);
    expect(monthsEndingBetween(at, at + 20 * 86_400_000)).toEqual([]);
    expect(monthsEndingBetween(at, at + 31 * 86_400_000)).toEqual([{ expiryMonth: 1, expiryYear: 2027 }]);
  });
});
