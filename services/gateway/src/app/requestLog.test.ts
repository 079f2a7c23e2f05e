import { createLogger } from '@tessera/common';
import { Registry } from 'prom-client';
import { aRequest } from '../testing/fixtures';
import { RedisRequestLogStore, type MerchantRecord, type RequestLogRetention } from '@tessera/merchant-data';
import { useGatewayRedis } from '../testing/redis';
import { RequestLogRecorder } from './requestLog';

const logger = createLogger('test', 'silent');

const facts = aRequest;

const db = useGatewayRedis();
beforeEach(() => db.redis.flushall());
const storeOf = (retention: RequestLogRetention) => new RedisRequestLogStore(db.redis, retention);

async function droppedTotal(metrics: Registry, reason: string): Promise<number> {
  const metric = await metrics.getSingleMetric('tessera_request_log_dropped_total')?.get();
  return metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** A store whose writes wait until released, or fail. */
class SlowStore extends RedisRequestLogStore {
  release: () => void = () => undefined;
  fail = false;
  batches: number[] = [];
  override async append(batch: readonly MerchantRecord[], now: Date): Promise<number> {
    this.batches.push(batch.length);
    await new Promise<void>((resolve) => (this.release = resolve));
    if (this.fail) throw new Error('redis is down');
    return super.append(batch, now);
  }
}

describe('RequestLogRecorder', () => {
  it('writes nothing during the call that records, then the whole buffer in one batch', async () => {
    const store = storeOf({ maxEntries: 100, maxAgeMs: 60_000 });
    const append = jest.spyOn(store, 'append');
    const recorder = new RequestLogRecorder(store, logger, { maxBuffered: 100 });
    for (let i = 0; i < 10; i++) recorder.record(facts({ requestId: `req_${i}` }));
    expect(append).not.toHaveBeenCalled();
    await recorder.flush();
    expect(append).toHaveBeenCalledTimes(1);
    expect((await store.range('acme', { count: 20 })).map((e) => e.requestId)).toHaveLength(10);
  });

  it('drops and counts what does not fit while Redis is slow, and what Redis refused, without ever throwing', async () => {
    const store = new SlowStore(db.redis, { maxEntries: 100, maxAgeMs: 60_000 });
    const metrics = new Registry();
    const recorder = new RequestLogRecorder(store, logger, { maxBuffered: 5, metrics });
    recorder.record(facts());
    await new Promise((r) => setImmediate(r));
    expect(store.batches).toEqual([1]);
    // The first batch is stuck in Redis: five more wait, the rest are dropped.
    for (let i = 0; i < 8; i++) expect(() => recorder.record(facts())).not.toThrow();
    expect(recorder.pending).toBe(5);
    expect(await droppedTotal(metrics, 'buffer_full')).toBe(3);
    store.fail = true;
    store.release();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(store.batches).toEqual([1, 5]);
    store.release();
    await recorder.flush();
    expect(await droppedTotal(metrics, 'store_unavailable')).toBe(6);
  });
});
