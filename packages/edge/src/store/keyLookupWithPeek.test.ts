import { Redis } from 'ioredis';
import { createRedisClient } from '@tessera/common/redis';
import { RedisMerchantSettingsStore, type ApiKeyRecord } from '@tessera/merchant-data';
import { aKeyRecord } from '../../../merchant-data/src/testing/fixtures';
import { startRedisServer, type RedisServer, commandsSentDuring } from '@tessera/test-support';
import { apiKeyBucket } from '../domain/rateLimit';
import { RedisKeyStoreWithPeek } from './keyLookupWithPeek';
import { RedisRateLimitCounter } from './rateLimitCounter';

describe('Redis API key store: the lookup of an API request, with its counters and settings', () => {
  let server: RedisServer;
  let redis: Redis;
  let store: RedisKeyStoreWithPeek;

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
    store = new RedisKeyStoreWithPeek(redis);
  });
  afterEach(async () => {
    await store.close();
  });

  describe('counting the request with the lookup', () => {
    const count = (now = new Date()) => ({ countKeyRequest: { windowMs: 1_000, now, mode: 'test', kind: 'secret' } });
    const counterOf = (record: ApiKeyRecord) => redis.get(`tessera:ratelimit:key:{m:${record.merchantId}}:${record.id}`);

    it('counts a key whose record alone shows the request passes, in the window the counter itself uses', async () => {
      const record = aKeyRecord();
      await store.create(record);
      expect((await store.lookUp(record.digest, count())).keyRequest).toMatchObject({ count: 1 });
      const again = await store.lookUp(record.digest, count());
      expect(again.keyRequest?.count).toBe(2);
      expect(again.keyRequest?.resetInMs).toBeGreaterThan(0);
      expect(again.keyRequest?.resetInMs).toBeLessThanOrEqual(1_000);
      expect((await new RedisRateLimitCounter(redis).hit(apiKeyBucket(record), 1_000)).count).toBe(3);
    });

    it('counts nothing for a key the request itself may still fail: an IP, domain or origin restriction, or a publishable key', async () => {
      const restricted = aKeyRecord('m1', ['198.51.100.0/24']);
      const domains = { ...aKeyRecord(), allowedDomains: ['shop.example'] };
      const publishable = aKeyRecord('m1', [], { kind: 'publishable', allowedOrigins: ['https://shop.example'] });
      for (const record of [restricted, domains, publishable]) {
        await store.create(record);
        const found = await store.lookUp(record.digest, count());
        expect(found.record?.id).toBe(record.id);
        expect(found.keyRequest).toBeUndefined();
        expect(await counterOf(record)).toBeNull();
      }
    });

    it('counts nothing for a revoked or expired key, or a key of another mode', async () => {
      const revoked = aKeyRecord();
      await store.create(revoked);
      await store.revoke(revoked.id, new Date());
      const expired = { ...aKeyRecord(), expiresAt: '2020-01-01T00:00:00.000Z' };
      await store.create(expired);
      for (const record of [revoked, expired]) expect((await store.lookUp(record.digest, count())).keyRequest).toBeUndefined();
      const live = aKeyRecord();
      await store.create(live);
      expect(
        (await store.lookUp(live.digest, { countKeyRequest: { windowMs: 1_000, now: new Date(), mode: 'live', kind: 'secret' } }))
          .keyRequest,
      ).toBeUndefined();
      for (const record of [revoked, expired, live]) expect(await counterOf(record)).toBeNull();
    });

    it('reads the merchant settings with the key only when asked', async () => {
      const record = aKeyRecord('m_settings');
      await store.create(record);
      expect((await store.lookUp(record.digest, {})).merchantSettings).toBeUndefined();
      expect((await store.lookUp(record.digest, { readMerchantSettings: true })).merchantSettings).toEqual({ settings: undefined });
      await new RedisMerchantSettingsStore(redis).setPspHosts('m_settings', ['api.psp.example'], new Date());
      expect((await store.lookUp(record.digest, { readMerchantSettings: true })).merchantSettings?.settings?.pspHosts).toEqual([
        'api.psp.example',
      ]);
      expect((await store.lookUp('0'.repeat(64), { readMerchantSettings: true })).merchantSettings).toBeUndefined();
    });
  });

  it('keeps finding keys after Redis lost its scripts (restart, failover, SCRIPT FLUSH)', async () => {
    const record = aKeyRecord();
    await store.create(record);
    expect(await store.findByDigest(record.digest)).toEqual(record);
    await redis.script('FLUSH');
    let found: unknown;
    const sent = await commandsSentDuring(server.url, async () => {
      found = await store.findByDigest(record.digest);
    });
    expect(found).toEqual(record);
    // NOSCRIPT, then the script's text once more.
    expect(sent).toEqual(['evalsha', 'eval']);
    await redis.script('FLUSH');
    expect(
      (
        await store.lookUp(record.digest, {
          countKeyRequest: { windowMs: 1_000, now: new Date(), mode: 'test', kind: 'secret' },
        })
      ).record,
    ).toEqual(record);
  });

  it('keeps what an API request reads in its merchant’s slot: record, last use, rate window and settings', async () => {
    // Redis Cluster hashes a key by the text inside its first {…} (its hash tag).
    const hashTagOf = (key: string) => /^[^{]*\{([^}]+)\}/.exec(key)?.[1];
    const record = aKeyRecord('m_slot');
    await store.create(record);
    await store.touchLastUse(record, new Date('2030-05-05T05:05:05Z'), undefined);
    await new RedisMerchantSettingsStore(redis).setPspHosts('m_slot', ['api.psp.example'], new Date());
    const found = await store.lookUp(record.digest, {
      countKeyRequest: { windowMs: 1_000, now: new Date(), mode: 'test', kind: 'secret' },
      readMerchantSettings: true,
    });
    expect(found).toMatchObject({
      record: { ...record, lastUsedAt: '2030-05-05T05:05:05.000Z' },
      keyRequest: { count: 1 },
      merchantSettings: { settings: { pspHosts: ['api.psp.example'] } },
    });
    const tags = Object.fromEntries((await redis.keys('*')).map((key) => [key, hashTagOf(key)]));
    expect(tags).toEqual({
      [`tessera:apikey:{m:m_slot}:${record.id}`]: 'm:m_slot',
      [`tessera:apikey-lastuse:{m:m_slot}:${record.id}`]: 'm:m_slot',
      [`tessera:ratelimit:key:{m:m_slot}:${record.id}`]: 'm:m_slot',
      'tessera:merchant-settings:{m:m_slot}': 'm:m_slot',
      // Read beside the script, in slots of their own: the index on a key's first use in a process only.
      [`tessera:apikey-digest:{${record.digest}}`]: record.digest,
      // The admin listing's, never read by an API request.
      'tessera:apikey-index': undefined,
    });
  });

  it('finds a key again after its digest moved, though this process remembered where it was', async () => {
    const record = aKeyRecord();
    await store.create(record);
    expect((await store.lookUp(record.digest, {})).record?.id).toBe(record.id);
    const moved = 'f'.repeat(64);
    expect(await store.rehashDigest(record.id, record.digest, moved, 'pepper2')).toBe(true);
    expect((await store.lookUp(record.digest, {})).record).toBeUndefined();
    expect((await store.lookUp(moved, {})).record).toMatchObject({ id: record.id, digest: moved });
    // Another process moves it back: this one still remembers the old digest's location and must not trust it.
    const other = new RedisKeyStoreWithPeek(redis);
    expect(await other.rehashDigest(record.id, moved, record.digest, 'pepper1')).toBe(true);
    expect((await store.lookUp(moved, {})).record).toBeUndefined();
    expect((await store.findByDigest(record.digest))?.digest).toBe(record.digest);
  });
});
