import { hashApiKey } from './domain/apiKeys';
import { registerDevKey } from './devKey';
import { MemoryApiKeyStore } from './store/memoryApiKeyStore';
import { captureLogger } from './testing/fixtures';
import type { ApiKeyRecord } from './domain/apiKeys';

const DEV_KEY = `tsk_test_${'d'.repeat(32)}`;
const PEPPER = 'p'.repeat(32);
/** Fake timers: the retry delays pass at once and the same number of attempts happens on every run. */
const sleep = (ms: number) => jest.advanceTimersByTimeAsync(ms);

/** A store that refuses writes (as Redis does with NOREPLICAS) until told otherwise. */
class RefusingStore extends MemoryApiKeyStore {
  refuse = true;
  writes = 0;
  override async create(record: ApiKeyRecord): Promise<boolean> {
    this.writes++;
    if (this.refuse) throw new Error('NOREPLICAS Not enough good replicas to write.');
    return super.create(record);
  }
}

describe('registerDevKey', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('keeps retrying with growing delays while the store refuses writes, and registers the key once it accepts', async () => {
    const store = new RefusingStore();
    const { logger, text } = captureLogger();
    const registration = registerDevKey({ keyStore: store, apiKey: DEV_KEY, pepper: PEPPER, logger, initialDelayMs: 10, maxDelayMs: 40 });
    try {
      await registration.firstAttempt;
      expect(registration.registered).toBe(false);
      await sleep(150);
      // 10, 20, 40, 40 ms: several attempts, not one per millisecond.
      expect(store.writes).toBeGreaterThanOrEqual(3);
      expect(store.writes).toBeLessThan(10);
      expect(registration.registered).toBe(false);

      store.refuse = false;
      await sleep(100);
      expect(registration.registered).toBe(true);
      expect(await store.findByDigest(hashApiKey(PEPPER, DEV_KEY))).toMatchObject({ merchantId: 'dev', mode: 'test' });
      const writes = store.writes;
      await sleep(100);
      expect(store.writes).toBe(writes);
      expect(text()).not.toContain(DEV_KEY);
    } finally {
      registration.stop();
    }
  });

  it('registers at once on a store that accepts writes', async () => {
    const store = new RefusingStore();
    store.refuse = false;
    const registration = registerDevKey({ keyStore: store, apiKey: DEV_KEY, pepper: PEPPER, logger: captureLogger().logger });
    await registration.firstAttempt;
    expect(registration.registered).toBe(true);
    expect(store.writes).toBe(1);
  });
});
