import { withDeadline } from './deadline';

describe('withDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers with the work when it settles in time, and leaves no timer behind', async () => {
    await expect(withDeadline(Promise.resolve('done'), 100, () => new Error('late'))).resolves.toBe('done');
    await expect(withDeadline(Promise.reject(new Error('broken')), 100, () => new Error('late'))).rejects.toThrow('broken');
    expect(jest.getTimerCount()).toBe(0);
  });

  it("rejects with the deadline's error once the time is up, not a moment before", async () => {
    const work = new Promise<string>(() => undefined);
    const bounded = withDeadline(work, 100, () => new Error('no answer within 100 ms'));
    let settled = false;
    const outcome = bounded
      .then(
        () => 'answered',
        (err: Error) => err.message,
      )
      .finally(() => (settled = true));
    jest.advanceTimersByTime(99);
    await Promise.resolve();
    expect(settled).toBe(false);
    jest.advanceTimersByTime(1);
    expect(await outcome).toBe('no answer within 100 ms');
  });
});
