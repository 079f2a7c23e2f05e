import { callerDeadlineCheck } from './callerDeadline';

describe('callerDeadlineCheck', () => {
  it("warns once when a caller's deadline leaves less than the proxy's budget", () => {
    const warn = jest.fn();
    const check = callerDeadlineCheck(37_000, { warn });
    check(new Date(Date.now() + 40_000));
    check(Infinity);
    expect(warn).not.toHaveBeenCalled();
    check(Date.now() + 30_000);
    check(Date.now() + 30_000);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatchObject({ budgetMs: 37_000 });
  });
});
