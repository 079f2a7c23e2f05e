import { createLogThrottle } from '@tessera/common';
import { captureLogger } from '../testing/fixtures';
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
    const ask = failOpen(
      logger,
      'limits are not enforced (failing open)',
      createLogThrottle(10_000, () => clock),
    );
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
});
