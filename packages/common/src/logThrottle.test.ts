import { createLogThrottle } from './logThrottle';

describe('createLogThrottle', () => {
  it('lets the first line through, then one more only once more than the interval has passed since it', () => {
    let clock = 5_000;
    const mayLog = createLogThrottle(10_000, () => clock);
    expect(mayLog()).toBe(true);
    clock += 1;
    expect(mayLog()).toBe(false);
    clock = 15_000;
    expect(mayLog()).toBe(false);
    clock = 15_001;
    expect(mayLog()).toBe(true);
    clock = 20_000;
    expect(mayLog()).toBe(false);
  });

  it('lets the first line through even at clock 0', () => {
    const mayLog = createLogThrottle(10_000, () => 0);
    expect([mayLog(), mayLog()]).toEqual([true, false]);
  });

  it('keeps a separate count for each throttle', () => {
    const clock = () => 1_000;
    const storeErrors = createLogThrottle(10_000, clock);
    const redisErrors = createLogThrottle(10_000, clock);
    expect([storeErrors(), redisErrors(), storeErrors()]).toEqual([true, true, false]);
  });

  it('waits 10 s by default', () => {
    let clock = 0;
    const mayLog = createLogThrottle(undefined, () => clock);
    mayLog();
    clock = 10_000;
    expect(mayLog()).toBe(false);
    clock = 10_001;
    expect(mayLog()).toBe(true);
  });
});
