import { handlingBudgetMs } from './grpcHandlers';

describe('handlingBudgetMs', () => {
  it('answers a little before the caller gives up: 10 % of the time left, at least 50 ms', () => {
    const now = 1_000_000;
    expect(handlingBudgetMs(new Date(now + 2000), now)).toBe(1800);
    expect(handlingBudgetMs(now + 300, now)).toBe(250);
    expect(handlingBudgetMs(now + 20, now)).toBe(0);
  });

  it('sets no bound when the caller set no deadline', () => {
    expect(handlingBudgetMs(Infinity)).toBeUndefined();
  });
});
