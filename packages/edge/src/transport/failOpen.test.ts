import { createLogThrottle } from '@tessera/common';
import { captureLogger } from '../testing/logger';
import { failOpen } from './failOpen';

describe('failOpen', () => {
  it("passes the store's answer through", async () => {
    const { logger, lines } = captureLogger();
    const ask = failOpen(logger, 'limits are not enforced (failing open)');
    await expect(ask(async () => ({ count: 3 }), 'req_1')).resolves.toEqual({ count: 3 });
    expect(lines()).toEqual([]);
  });

  it('answers undefined when the store fails, logging the failure with the request id, at most once per throttle interval', async () => {
    const { logger, lines, text } = captureLogger();
    let clock = 0;
    const ask = failOpen(logger, 'limits are not enforced (failing open)', { mayLog: createLogThrottle(10_000, () => clock) });
    const down = () => Promise.reject(new Error('connect ECONNREFUSED'));
    await expect(ask(down, 'req_1')).resolves.toBeUndefined();
    await expect(ask(down, 'req_2')).resolves.toBeUndefined();
    expect(lines()).toHaveLength(1);
    expect(text()).toContain('limits are not enforced (failing open)');
    expect(text()).toContain('req_1');
    expect(text()).toContain('ECONNREFUSED');
    clock = 10_001;
    await ask(down, 'req_3');
    expect(lines()).toHaveLength(2);
    expect(text()).toContain('req_3');
  });

  describe('with a deadline (RATE_LIMIT_STORE_TIMEOUT_MS)', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('answers undefined once the deadline passes, logging it, though the store never answers', async () => {
      const { logger, text } = captureLogger();
      const ask = failOpen(logger, 'limits are not enforced (failing open)', { deadlineMs: 100 });
      let answered = false;
      const asked = ask(() => new Promise<never>(() => undefined), 'req_1').then((answer) => {
        answered = true;
        return answer;
      });
      await jest.advanceTimersByTimeAsync(99);
      expect(answered).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await expect(asked).resolves.toBeUndefined();
      expect(text()).toContain('limits are not enforced (failing open)');
      expect(text()).toContain('req_1');
      expect(text()).toContain('did not answer within 100 ms');
    });

    it('passes an answer given in time through, and a late failure is neither logged nor left unhandled', async () => {
      const { logger, lines } = captureLogger();
      const ask = failOpen(logger, 'limits are not enforced (failing open)', { deadlineMs: 100 });
      const inTime = ask(() => new Promise((resolve) => setTimeout(() => resolve({ count: 7 }), 50)), 'req_1');
      await jest.advanceTimersByTimeAsync(50);
      await expect(inTime).resolves.toEqual({ count: 7 });
      expect(lines()).toEqual([]);
      const late = ask(() => new Promise((_, reject) => setTimeout(() => reject(new Error('late')), 2_000)), 'req_2');
      await jest.advanceTimersByTimeAsync(100);
      await expect(late).resolves.toBeUndefined();
      await jest.advanceTimersByTimeAsync(2_000);
      expect(lines()).toHaveLength(1);
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});
