import { RedisEventStore } from '@tessera/merchant-data';
import { useFieldsRedis } from '../testing/redis';
import { cardTestingReporter } from './cardTestingEvents';

describe('card_testing.suspected', () => {
  const db = useFieldsRedis();
  const KEY = { id: 'key_attacked1', merchantId: 'shop-attacked', mode: 'live' as const };

  it('is recorded once per key and cool-down window, for the key’s merchant and mode, naming the key by id', async () => {
    let nowMs = Date.parse('2030-01-01T00:00:10.000Z');
    const events = new RedisEventStore(db.redis);
    const report = cardTestingReporter({
      recorder: events,
      keys: { get: async (id) => (id === KEY.id ? KEY : undefined) },
      windowSeconds: 300,
      now: () => new Date(nowMs),
    });
    await report(KEY.id, 40);
    await report(KEY.id, 41);
    await report('key_unknown1', 40);
    nowMs += 300_000;
    await report(KEY.id, 12);
    const recorded = (await events.list(KEY.merchantId, 'live', { limit: 10 })).data;
    const byAttempts = [...recorded].sort((x, y) => Number(x.data.object.attempts) - Number(y.data.object.attempts));
    expect(byAttempts.map((e) => [e.type, e.mode, e.data.object])).toEqual([
      ['card_testing.suspected', 'live', { keyId: KEY.id, attempts: 12, windowSeconds: 300 }],
      ['card_testing.suspected', 'live', { keyId: KEY.id, attempts: 40, windowSeconds: 300 }],
    ]);
  });

  it('counts a key lookup that fails instead of throwing into the limiter', async () => {
    const failures: string[] = [];
    const report = cardTestingReporter({
      recorder: new RedisEventStore(db.redis),
      keys: { get: () => Promise.reject(new Error('redis down')) },
      windowSeconds: 300,
      now: () => new Date(),
      onFailure: (type) => failures.push(type),
    });
    await expect(report(KEY.id, 40)).resolves.toBeUndefined();
    expect(failures).toEqual(['card_testing.suspected']);
  });
});
