import { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { createRedisClient } from '@tessera/common/redis';
import { startRedisServer, type RedisServer, commandsSentDuring } from '@tessera/test-support';
import { issueApiKey } from '../domain/apiKeys';
import { aKeyRecord, TEST_PEPPER } from '../testing/fixtures';
import { API_KEY_INDEX, apiKeyDigestKey, apiKeyRecordKey, RedisApiKeyStore } from './redisApiKeyStore';

describe('Redis API key store', () => {
  let server: RedisServer;
  let redis: Redis;
  let store: RedisApiKeyStore;

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    redis = createRedisClient(server.url, { commandTimeoutMs: 500, profile: 'server' });
    await redis.connect();
    await redis.flushall();
    store = new RedisApiKeyStore(redis);
  });
  afterEach(async () => {
    await store.close();
  });

  it('sends the text of each script once per connection and then only its SHA (EVALSHA)', async () => {
    const records = [aKeyRecord(), aKeyRecord(), aKeyRecord()];
    const sent = await commandsSentDuring(server.url, async () => {
      for (const record of records) {
        expect(await store.create(record)).toBe(true);
        expect(await store.revoke(record.id, new Date())).toBeDefined();
      }
    });
    // The compare-and-set of revoke: one EVAL, the other calls EVALSHA (create is plain commands).
    expect(sent.filter((c) => c === 'eval')).toHaveLength(1);
    expect(sent.filter((c) => c === 'evalsha')).toHaveLength(2);
  });

  it('stores a record and finds it by digest and by id', async () => {
    const record = aKeyRecord('m1', ['10.0.0.0/8']);
    expect(await store.create(record)).toBe(true);
    expect(await store.findByDigest(record.digest)).toEqual(record);
    expect(await store.get(record.id)).toEqual(record);
    expect(await store.findByDigest('0'.repeat(64))).toBeUndefined();
    expect(await store.get('key_missing')).toBeUndefined();
  });

  it('uses the documented key layout and never stores the API key itself', async () => {
    const { apiKey, record } = issueApiKey({ merchantId: 'm1', mode: 'live', allowedCidrs: [], pepper: TEST_PEPPER, now: new Date() });
    await store.create(record);
    expect(JSON.parse((await redis.get(`tessera:apikey-digest:{${record.digest}}`)) ?? 'null')).toEqual({
      merchantId: 'm1',
      id: record.id,
    });
    expect(JSON.parse((await redis.get(`tessera:apikey:{m:m1}:${record.id}`)) ?? 'null')).toEqual(record);
    expect(await redis.hgetall('tessera:apikey-index')).toEqual({ [record.id]: 'm1' });
    for (const key of await redis.keys('*')) {
      const type = await redis.type(key);
      const dump =
        type === 'string' ? await redis.get(key) : JSON.stringify(type === 'set' ? await redis.smembers(key) : await redis.hgetall(key));
      expect(dump).not.toContain(apiKey.slice('tsk_live_'.length));
    }
  });

  it('refuses a second record with the same digest and writes nothing for it', async () => {
    const first = aKeyRecord();
    const second = { ...aKeyRecord(), digest: first.digest };
    expect(await store.create(first)).toBe(true);
    expect(await store.create(second)).toBe(false);
    expect(await store.get(second.id)).toBeUndefined();
    expect((await store.list()).map((r) => r.id)).toEqual([first.id]);
  });

  it('lists every record, oldest first', async () => {
    const a = { ...aKeyRecord('a'), createdAt: '2030-01-01T00:00:00.000Z' };
    const b = { ...aKeyRecord('b'), createdAt: '2029-01-01T00:00:00.000Z' };
    await store.create(a);
    await store.create(b);
    expect((await store.list()).map((r) => r.merchantId)).toEqual(['b', 'a']);
  });

  it('revokes a key once, keeping the first revocation time, and answers undefined for unknown ids', async () => {
    const record = aKeyRecord();
    await store.create(record);
    const revoked = await store.revoke(record.id, new Date('2031-01-01T00:00:00Z'));
    expect(revoked?.revokedAt).toBe('2031-01-01T00:00:00.000Z');
    const again = await store.revoke(record.id, new Date('2032-01-01T00:00:00Z'));
    expect(again?.revokedAt).toBe('2031-01-01T00:00:00.000Z');
    expect((await store.findByDigest(record.digest))?.revokedAt).toBe('2031-01-01T00:00:00.000Z');
    expect(await store.revoke('key_missing', new Date())).toBeUndefined();
  });

  it('records last use apart from the record, so it can never undo a revocation', async () => {
    const record = aKeyRecord();
    await store.create(record);
    await store.touchLastUse(record, new Date('2030-05-05T05:05:05Z'), '203.0.113.9');
    await store.revoke(record.id, new Date('2030-06-01T00:00:00Z'));
    await store.touchLastUse(record, new Date('2030-06-02T00:00:00Z'), '2001:db8::1');
    expect(await store.get(record.id)).toMatchObject({
      revokedAt: '2030-06-01T00:00:00.000Z',
      lastUsedAt: '2030-06-02T00:00:00.000Z',
      lastUsedIp: '2001:db8::1',
    });
  });

  it('loads a record written before domain restrictions existed, with no allowed domains', async () => {
    const { allowedDomains: _none, ...legacy } = aKeyRecord('m1', ['10.0.0.0/8']);
    await redis.set(apiKeyRecordKey(legacy), JSON.stringify(legacy));
    await redis.set(apiKeyDigestKey(legacy.digest), JSON.stringify({ merchantId: legacy.merchantId, id: legacy.id }));
    await redis.hset(API_KEY_INDEX, legacy.id, legacy.merchantId);
    expect(await store.findByDigest(legacy.digest)).toEqual({ ...legacy, allowedDomains: [] });
    const updated = await store.updateRestrictions(legacy.id, { allowedCidrs: [], allowedDomains: ['shop.example'] }, new Date());
    expect(updated).toMatchObject({ allowedCidrs: [], allowedDomains: ['shop.example'] });
  });

  it('replaces the restrictions of a key and never un-revokes it', async () => {
    const record = aKeyRecord();
    await store.create(record);
    await store.revoke(record.id, new Date('2030-01-01T00:00:00Z'));
    const updated = await store.updateRestrictions(record.id, { allowedCidrs: ['203.0.113.0/24'], allowedDomains: [] }, new Date());
    expect(updated).toMatchObject({ allowedCidrs: ['203.0.113.0/24'], revokedAt: '2030-01-01T00:00:00.000Z' });
    expect(await store.updateRestrictions('key_missing', { allowedCidrs: [], allowedDomains: [] }, new Date())).toBeUndefined();
  });

  it('keeps a revocation that races with many restriction edits', async () => {
    const record = aKeyRecord();
    await store.create(record);
    const edits = Array.from({ length: 4 }, (_, i) =>
      store.updateRestrictions(record.id, { allowedCidrs: [`10.0.${i}.0/24`], allowedDomains: [] }, new Date()),
    );
    await Promise.all([...edits, store.revoke(record.id, new Date())]);
    expect((await store.get(record.id))?.revokedAt).toBeDefined();
  });

  it('finds a key with its record and last use in a single command, sent by SHA after the first time', async () => {
    const record = aKeyRecord();
    await store.create(record);
    await store.touchLastUse(record, new Date('2030-05-05T05:05:05Z'), '203.0.113.9');
    await store.findByDigest(record.digest);
    let found: unknown;
    const sent = await commandsSentDuring(server.url, async () => {
      found = await store.findByDigest(record.digest);
    });
    expect(found).toEqual({ ...record, lastUsedAt: '2030-05-05T05:05:05.000Z', lastUsedIp: '203.0.113.9' });
    expect(sent).toEqual(['evalsha']);
  });

  it('answers ping while Redis is up', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });
});

describe('Redis API key store with Redis down', () => {
  it('fails fast with service_unavailable instead of hanging or crashing', async () => {
    const server = await startRedisServer();
    const redis = createRedisClient(server.url, { commandTimeoutMs: 500, profile: 'server' });
    redis.on('error', () => {});
    await redis.connect();
    const store = new RedisApiKeyStore(redis);
    await server.stop();
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    for (const op of [() => store.findByDigest('0'.repeat(64)), () => store.ping(), () => store.list(), () => store.create(aKeyRecord())]) {
      await expect(op()).rejects.toMatchObject({ code: 'service_unavailable' });
    }
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(store.findByDigest('x')).rejects.toBeInstanceOf(TesseraError);
    await store.close();
  });
});
