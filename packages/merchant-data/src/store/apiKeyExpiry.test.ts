import { useStoreRedis } from '../testing/redis';
import { buildApiKeyRecord, generateApiKey } from '../domain/apiKeys';
import type { ApiKeyStore } from './apiKeyStore';
import { apiKeyDigestKey, apiKeyRecordKey, RedisApiKeyStore } from './redisApiKeyStore';

const PEPPER = 'expiry-test-pepper-expiry-test-pepper-01';

function aRecord() {
  return buildApiKeyRecord(generateApiKey('test'), { merchantId: 'm', mode: 'test', allowedCidrs: [], pepper: PEPPER, now: new Date() });
}

function contract(name: string, make: () => Promise<ApiKeyStore>) {
  describe(`${name} key store: scheduled expiry`, () => {
    let store: ApiKeyStore;
    beforeEach(async () => {
      store = await make();
    });

    it('stores the expiry on the record, where lookups by digest and the list see it', async () => {
      const record = aRecord();
      await store.create(record);
      const at = new Date('2031-01-01T00:00:00.000Z');
      expect((await store.scheduleExpiry(record.id, at))?.expiresAt).toBe(at.toISOString());
      expect((await store.findByDigest(record.digest))?.expiresAt).toBe(at.toISOString());
      expect((await store.list()).find((r) => r.id === record.id)?.expiresAt).toBe(at.toISOString());
    });

    it('only ever brings an expiry forward', async () => {
      const record = aRecord();
      await store.create(record);
      await store.scheduleExpiry(record.id, new Date('2031-01-01T00:00:00.000Z'));
      expect((await store.scheduleExpiry(record.id, new Date('2032-01-01T00:00:00.000Z')))?.expiresAt).toBe('2031-01-01T00:00:00.000Z');
      expect((await store.scheduleExpiry(record.id, new Date('2030-07-01T00:00:00.000Z')))?.expiresAt).toBe('2030-07-01T00:00:00.000Z');
    });

    it('leaves a revoked key as it is', async () => {
      const record = aRecord();
      await store.create(record);
      await store.revoke(record.id, new Date());
      expect((await store.scheduleExpiry(record.id, new Date('2031-01-01T00:00:00.000Z')))?.expiresAt).toBeUndefined();
    });

    it('answers undefined for an unknown key', async () => {
      expect(await store.scheduleExpiry('key_nope', new Date())).toBeUndefined();
    });
  });
}

describe('Redis', () => {
  const db = useStoreRedis();

  contract('Redis', async () => {
    await db.redis.flushall();
    return new RedisApiKeyStore(db.redis);
  });

  it('loads a record written before expiries existed, as a key that never expires', async () => {
    await db.redis.flushall();
    const { expiresAt: _none, allowedDomains: _d, ...legacy } = aRecord();
    await db.redis.set(apiKeyRecordKey(legacy), JSON.stringify(legacy));
    await db.redis.set(apiKeyDigestKey(legacy.digest), JSON.stringify({ merchantId: legacy.merchantId, id: legacy.id }));
    const loaded = await new RedisApiKeyStore(db.redis).findByDigest(legacy.digest);
    expect(loaded?.id).toBe(legacy.id);
    expect(loaded?.expiresAt).toBeUndefined();
  });
});
