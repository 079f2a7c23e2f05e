import { type ApiKeyRecord, hashApiKey, RedisApiKeyStore } from '@tessera/merchant-data';
import { registerDevKey } from './devKey';
import { captureLogger } from './testing/fixtures';
import { useGatewayRedis } from './testing/redis';

const DEV_KEY = `tsk_test_${'d'.repeat(32)}`;
const PEPPER = 'p'.repeat(32);
const db = useGatewayRedis();

/**
 * Fake timers: the retry delays pass at once and the same number of attempts happens on every run.
 * Time moves in steps; after each, a PING's answer (queued behind any attempt's command) lets
 * that attempt's Redis round trip finish before the next step.
 */
async function sleep(ms: number): Promise<void> {
  for (let passed = 0; passed < ms; passed += 5) {
    await jest.advanceTimersByTimeAsync(5);
    await db.redis.ping();
  }
}

/** A store that refuses writes (as Redis does with NOREPLICAS) until told otherwise. */
class RefusingStore extends RedisApiKeyStore {
  refuse = true;
  writes = 0;
  override async create(record: ApiKeyRecord): Promise<boolean> {
    this.writes++;
    if (this.refuse) throw new Error('NOREPLICAS Not enough good replicas to write.');
    return super.create(record);
  }
}

describe('registerDevKey', () => {
  // The Redis client's own ticks stay real: only the retry delays are faked.
  beforeEach(async () => {
    await db.redis.flushall();
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  });
  afterEach(() => jest.useRealTimers());

  it('keeps retrying with growing delays while the store refuses writes, and registers the key once it accepts', async () => {
    const store = new RefusingStore(db.redis);
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
    const store = new RefusingStore(db.redis);
    store.refuse = false;
    const registration = registerDevKey({ keyStore: store, apiKey: DEV_KEY, pepper: PEPPER, logger: captureLogger().logger });
    await registration.firstAttempt;
    expect(registration.registered).toBe(true);
    expect(store.writes).toBe(1);
  });
});
