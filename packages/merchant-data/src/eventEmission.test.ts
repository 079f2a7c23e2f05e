import { useStoreRedis } from './testing/redis';
import { emitEvent, scheduleSweep } from './eventEmission';
import { RedisSweepLease } from './store/sweepLease';
import { RedisEventStore } from './store/eventStore';

describe('emitEvent', () => {
  const redis = useStoreRedis();

  it('never throws: a recorder that fails is logged without the object and counted', async () => {
    const errors: unknown[] = [];
    const failures: string[] = [];
    const recorder = {
      record: () => Promise.reject(new Error('redis down')),
      recordOnce: () => Promise.reject(new Error('redis down')),
    };
    const outcome = await emitEvent(
      recorder,
      { type: 'api_key.revoked', merchantId: 'm_1', mode: 'test', object: { id: 'key_abcdefgh', kind: 'secret', mode: 'test' } },
      { logger: { error: (obj: unknown) => errors.push(obj) } as never, onFailure: (type) => failures.push(type) },
    );
    expect(outcome).toBe('failed');
    expect(failures).toEqual(['api_key.revoked']);
    expect(JSON.stringify(errors)).not.toContain('key_abcdefgh');
  });

  it('refuses an object with a card number, and counts it as a failure rather than recording it', async () => {
    const store = new RedisEventStore(redis.redis);
    const failures: string[] = [];
    const outcome = await emitEvent(
      store,
      { type: 'form_session.expired', merchantId: 'm_pan', mode: 'test', object: { id: 'fs_abcdefgh', status: '4242424242424242' } },
      { onFailure: (type) => failures.push(type) },
    );
    expect(outcome).toBe('failed');
    expect((await store.list('m_pan', 'test', { limit: 10 })).data).toEqual([]);
  });

  it('records once under a name: a second emission of the same object and threshold is already recorded', async () => {
    const store = new RedisEventStore(redis.redis);
    const emission = {
      type: 'api_key.expiring_soon' as const,
      merchantId: `m_${Math.random()}`,
      mode: 'test' as const,
      object: { id: 'key_abcdefgh', kind: 'secret', mode: 'test' },
      once: 'api_key.expiring_soon:key_abcdefgh:123',
    };
    expect(await emitEvent(store, emission, {})).toBe('recorded');
    expect(await emitEvent(store, emission, {})).toBe('already');
  });
});

describe('RedisSweepLease', () => {
  const redis = useStoreRedis();

  it('is taken by one holder at a time until it lapses', async () => {
    const name = `sweep-${Math.random()}`;
    const a = new RedisSweepLease(redis.redis);
    const b = new RedisSweepLease(redis.redis);
    expect(await a.take(name, 60_000)).toBe(true);
    expect(await b.take(name, 60_000)).toBe(false);
    expect(await a.take(name, 60_000)).toBe(false);
    await redis.redis.del(`tessera:events:sweep-lease:${name}`);
    expect(await b.take(name, 60_000)).toBe(true);
  });
});

describe('scheduleSweep', () => {
  afterEach(() => jest.useRealTimers());

  it('runs the sweep only on the replica that takes the lease, and no more once stopped', async () => {
    jest.useFakeTimers();
    const runs: string[] = [];
    const errors: unknown[] = [];
    const logger = { error: (fields: unknown) => errors.push(fields) };
    let holder: string | undefined;
    const lease = (name: string) => ({
      take: async () => {
        if (holder !== undefined) return false;
        holder = name;
        return true;
      },
    });
    const a = scheduleSweep({ name: 's', intervalMs: 60_000, lease: lease('a'), sweep: async () => void runs.push('a'), logger });
    const b = scheduleSweep({
      name: 's',
      intervalMs: 60_000,
      lease: lease('b'),
      sweep: async () => {
        runs.push('b');
        throw new Error('boom');
      },
      logger,
    });
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs).toEqual(['a']);
    holder = undefined;
    await b.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(runs).toEqual(['a', 'a']);
    await a.stop();
    expect(errors).toEqual([]);
  });

  it('logs a failed sweep with its name, and tries again at the next interval', async () => {
    jest.useFakeTimers();
    const errors: Array<Record<string, unknown>> = [];
    let calls = 0;
    const schedule = scheduleSweep({
      name: 'failing',
      intervalMs: 10_000,
      lease: { take: async () => true },
      sweep: async () => {
        calls += 1;
        throw new Error('redis down');
      },
      logger: { error: (fields: Record<string, unknown>) => errors.push(fields) },
    });
    await jest.advanceTimersByTimeAsync(1000);
    await jest.advanceTimersByTimeAsync(10_000);
    await schedule.stop();
    expect(calls).toBe(2);
    expect(errors).toEqual([
      { sweep: 'failing', err: 'redis down' },
      { sweep: 'failing', err: 'redis down' },
    ]);
  });
});
