import { createLogger } from '@tessera/common';
import { issueApiKey, RedisApiKeyStore } from '@tessera/merchant-data';
import { aTokenRecord, anIdempotency, TEST_PEPPER, tokenReadingUpstreams } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createApp } from './app';

const record = aTokenRecord();
const { vault, proxy } = tokenReadingUpstreams(record);
const db = useGatewayRedis();

describe('authentication of a key with a scheduled expiry', () => {
  let app: RunningApp;
  let clock: Date;
  let oldKey: string;
  let newKey: string;

  beforeEach(async () => {
    clock = new Date('2030-06-01T12:00:00.000Z');
    await db.redis.flushall();
    const store = new RedisApiKeyStore(db.redis);
    const old = issueApiKey({ merchantId: 'm', mode: 'test', allowedCidrs: [], pepper: TEST_PEPPER, now: clock });
    const fresh = issueApiKey({ merchantId: 'm', mode: 'test', allowedCidrs: [], pepper: TEST_PEPPER, now: clock });
    await store.create(old.record);
    await store.create(fresh.record);
    await store.scheduleExpiry(old.record.id, new Date('2030-06-02T12:00:00.000Z'));
    oldKey = old.apiKey;
    newKey = fresh.apiKey;
    app = await startApp(
      createApp({
        config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: [] },
        logger: createLogger('gateway-test', 'silent'),
        keyStore: store,
        pepper: TEST_PEPPER,
        idempotency: anIdempotency(db.redis),
        vault,
        proxy,
        now: () => clock,
      }),
    );
  });
  afterEach(async () => {
    await app.close();
  });

  const get = (apiKey: string) => app.request('GET', `/v1/token/${record.token}`, { headers: { 'x-api-key': apiKey } });

  it('accepts both the old and the new key until the old one expires', async () => {
    expect((await get(oldKey)).status).toBe(200);
    expect((await get(newKey)).status).toBe(200);
    clock = new Date('2030-06-02T11:59:59.999Z');
    expect((await get(oldKey)).status).toBe(200);
  });

  it('answers 401 api_key_invalid for the old key from its expiry on, and keeps accepting the new one', async () => {
    clock = new Date('2030-06-02T12:00:00.000Z');
    const refused = await get(oldKey);
    expect(refused.status).toBe(401);
    expect(refused.headers['x-tessera-error']).toBe('api_key_invalid');
    expect((await get(newKey)).status).toBe(200);
  });
});
