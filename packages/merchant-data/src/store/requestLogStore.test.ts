import { buildRequestLogRecord, type RequestFacts } from '../domain/requestLog';
import { aRequest } from '../testing/fixtures';
import { useStoreRedis } from '../testing/redis';
import {
  entryIdOf,
  RedisRequestLogStore,
  streamIdOf,
  type MerchantRecord,
  type RequestLogRetention,
  type RequestLogStore,
} from './requestLogStore';

const record = (merchantId: string, requestId: string, at: Date, overrides: Partial<RequestFacts> = {}): MerchantRecord => ({
  merchantId,
  record: buildRequestLogRecord(aRequest({ at, merchantId, requestId, ms: 5, ...overrides })),
});

function contract(name: string, make: (retention: RequestLogRetention) => RequestLogStore) {
  describe(`${name} request log store`, () => {
    const retention = { maxEntries: 1000, maxAgeMs: 3_600_000 };

    it('keeps each merchant’s entries apart, newest first, and pages on from a cursor', async () => {
      const store = make(retention);
      const now = new Date();
      await store.append(
        [1, 2, 3, 4, 5].map((i) => record(`pages-${name}`, `req_${i}`, now)),
        now,
      );
      await store.append([record(`other-${name}`, 'req_x', now)], now);
      const first = await store.range(`pages-${name}`, { count: 2 });
      expect(first.map((e) => e.requestId)).toEqual(['req_5', 'req_4']);
      const next = await store.range(`pages-${name}`, { before: first[1]?.id as string, count: 10 });
      expect(next.map((e) => e.requestId)).toEqual(['req_3', 'req_2', 'req_1']);
      expect((await store.range(`other-${name}`, { count: 10 })).map((e) => e.requestId)).toEqual(['req_x']);
      expect(await store.get(`pages-${name}`, first[0]?.id as string)).toMatchObject({ requestId: 'req_5', status: 201 });
      expect(await store.get(`other-${name}`, first[0]?.id as string)).toBeUndefined();
    });

    it('reads a time range by entry time', async () => {
      const store = make(retention);
      const now = new Date();
      await store.append([record(`range-${name}`, 'req_a', now)], now);
      const entries = await store.range(`range-${name}`, { fromMs: now.getTime() + 60_000, count: 10 });
      expect(entries).toEqual([]);
      expect(await store.range(`range-${name}`, { fromMs: now.getTime() - 60_000, toMs: now.getTime() + 60_000, count: 10 })).toHaveLength(
        1,
      );
    });

    it('counts requests, error classes and PSP time buckets per minute', async () => {
      const store = make(retention);
      const now = new Date();
      const minute = Math.floor(now.getTime() / 60_000);
      const proxy = { pspUrl: 'https://psp.example/x', method: 'post', token: 'tok.a', bodyTemplate: null, headerNames: [] };
      await store.append(
        [
          record(`stats-${name}`, 'r1', now),
          record(`stats-${name}`, 'r2', now, { status: 404 }),
          record(`stats-${name}`, 'r3', now, { status: 200, proxy: { ...proxy, pspStatus: 200, pspMs: 30 } }),
        ],
        now,
      );
      await store.append([record(`stats-${name}`, 'r4', now, { status: 502, proxy: { ...proxy, pspStatus: null, pspMs: null } })], now);
      const counters = await store.minuteCounters(`stats-${name}`, minute - 5, minute + 1);
      expect([...counters.keys()]).toEqual([minute]);
      expect(counters.get(minute)).toEqual({ n: 4, c4: 1, c5: 1, b20: 1 });
    });
  });
}

describe('with Redis', () => {
  const env = useStoreRedis();
  contract('redis', (retention) => new RedisRequestLogStore(env.redis, retention));

  it('caps each merchant’s stream by count and age, and lets an idle merchant’s log expire', async () => {
    const store = new RedisRequestLogStore(env.redis, { maxEntries: 100, maxAgeMs: 60_000 });
    const now = new Date();
    for (let i = 0; i < 20; i++) {
      await store.append(
        Array.from({ length: 50 }, (_, j) => record('capped', `req_${i}_${j}`, now)),
        now,
      );
    }
    // MAXLEN ~ trims whole stream nodes (100 entries each by default): a little over the cap stays.
    const length = await env.redis.xlen('tessera:request-log:{m:capped}');
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThan(300);
    const ttl = await env.redis.pttl('tessera:request-log:{m:capped}');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // A minute later by the gateway's clock, MINID trims what is older than the retention.
    await store.append([record('capped', 'late', now)], new Date(now.getTime() + 120_000));
    expect(await env.redis.xlen('tessera:request-log:{m:capped}')).toBeLessThan(length);
  });

  it('answers 503 when Redis is gone', async () => {
    const client = env.redis.duplicate();
    // disconnect(), not quit(): quit() on a client that never connected dials first and leaves its connect timer running.
    client.disconnect();
    const store = new RedisRequestLogStore(client, { maxEntries: 10, maxAgeMs: 60_000 });
    await expect(store.range('acme', { count: 1 })).rejects.toMatchObject({ code: 'service_unavailable' });
  });
});

it('turns stream ids into ids without long digit runs, and back', () => {
  expect(entryIdOf('1732372800000-0')).toBe('m3ua1beo-0');
  expect(streamIdOf('m3ua1beo-0')).toBe('1732372800000-0');
  expect(streamIdOf('1732372800000-0')).toBeUndefined();
  expect(streamIdOf('not an id')).toBeUndefined();
});
