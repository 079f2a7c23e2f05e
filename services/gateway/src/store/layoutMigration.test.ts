import {
  ADMIN_KEYS,
  ADMIN_SLOT,
  issueApiKey,
  merchantsWithKeys,
  RedisAuditLog,
  RedisDetokenizationLog,
  RedisMerchantSettingsStore,
  RedisRequestLogStore,
} from '@tessera/merchant-data';
import { RedisKeyStoreWithPeek } from '@tessera/edge';
import { useGatewayRedis } from '../testing/redis';
import { RedisIdempotencyStore } from './idempotencyStore';
import { LAYOUT_KEY, legacyRecordsReadUntil, migrateToMerchantSlots } from './layoutMigration';

const PEPPER = 'layout-migration-test-pepper-0123456789';
const DAY_MS = 86_400_000;

describe('upgrading a standalone Redis from the layout before merchant slots', () => {
  const db = useGatewayRedis();

  /** What a gateway of the version before wrote, under the names it used (unprefixed on a standalone Redis). */
  async function writeOldLayout(now: number) {
    const redis = db.redis;
    const acme = issueApiKey({ merchantId: 'acme', mode: 'test', allowedCidrs: [], pepper: PEPPER, now: new Date(now) });
    const globex = issueApiKey({ merchantId: 'globex', mode: 'live', allowedCidrs: [], pepper: PEPPER, now: new Date(now) });
    for (const { record } of [acme, globex]) {
      await redis.set(`tessera:apikey:${record.id}`, JSON.stringify(record));
      await redis.set(`tessera:apikey-digest:${record.digest}`, record.id);
      await redis.sadd('tessera:apikeys', record.id);
    }
    await redis.hset(`tessera:apikey-lastuse:${acme.record.id}`, { at: '2030-01-01T00:00:00.000Z', ip: '203.0.113.7' });
    await redis.set('tessera:merchant-settings:acme', JSON.stringify({ pspHosts: ['api.psp.example'], updatedAt: 'x' }));
    await redis.xadd('tessera:request-log:acme', `${now - 1000}-0`, 'e', JSON.stringify({ requestId: 'req_old', status: 201 }));
    await redis.pexpire('tessera:request-log:acme', DAY_MS);
    const hour = Math.floor(now / 3_600_000);
    await redis.hset(`tessera:request-stats:acme:${hour}`, `${hour * 60}:requests`, '7');
    await redis.xadd('tessera:detokenizations:merchant:acme', '*', 'entry', JSON.stringify({ requestId: 'req_detok', merchantId: 'acme' }));
    const operator = { id: 'op_1', email: 'ops@acme.test', passwordHash: 'h', merchantId: 'acme', createdAt: '2030-01-01T00:00:00.000Z' };
    await redis.set('tessera:operator:op_1', JSON.stringify(operator));
    await redis.set('tessera:operator-email:ops@acme.test', 'op_1');
    await redis.sadd('tessera:operators', 'op_1');
    await redis.lpush('tessera:audit', JSON.stringify({ action: 'key.create', merchantId: 'acme' }));
    await redis.lpush('tessera:audit:merchant:acme', JSON.stringify({ action: 'key.create', merchantId: 'acme' }));
    await redis.set(
      'tessera:idempotency:acme:test:k1',
      JSON.stringify({ state: 'done', fingerprint: 'fp', sealed: 'answer' }),
      'PX',
      DAY_MS,
    );
    return { acme, globex, hour };
  }

  it('finds every API key, its last use, settings, logs, operators and audit trail in the new layout, and replays old answers', async () => {
    await db.redis.flushall();
    const now = Date.now();
    const { acme, globex, hour } = await writeOldLayout(now);

    const marker = await migrateToMerchantSlots(db.redis, { clustered: false, now: () => now });
    expect(marker).toEqual({ version: 2, migratedAt: now, legacyData: true });

    const keys = new RedisKeyStoreWithPeek(db.redis);
    const found = await keys.lookUp(acme.record.digest, { readMerchantSettings: true });
    expect(found.record).toEqual({ ...acme.record, lastUsedAt: '2030-01-01T00:00:00.000Z', lastUsedIp: '203.0.113.7' });
    expect(found.merchantSettings?.settings?.pspHosts).toEqual(['api.psp.example']);
    expect(await keys.findByDigest(globex.record.digest)).toEqual(globex.record);
    expect((await keys.list()).map((r) => r.id).sort()).toEqual([acme.record.id, globex.record.id].sort());
    expect(await keys.revoke(globex.record.id, new Date(now))).toMatchObject({ revokedAt: new Date(now).toISOString() });
    expect((await merchantsWithKeys(db.redis)).sort()).toEqual(['acme', 'globex']);

    expect((await new RedisMerchantSettingsStore(db.redis).get('acme'))?.pspHosts).toEqual(['api.psp.example']);
    const log = new RedisRequestLogStore(db.redis, { maxEntries: 100, maxAgeMs: DAY_MS });
    const [entry] = await log.range('acme', { count: 10 });
    expect(entry).toMatchObject({ requestId: 'req_old', status: 201 });
    // The entry keeps its id, so links to it stay valid.
    expect(await log.get('acme', entry!.id)).toMatchObject({ requestId: 'req_old' });
    expect(await log.minuteCounters('acme', hour * 60, hour * 60 + 60)).toEqual(new Map([[hour * 60, { requests: 7 }]]));
    const detokenizations = new RedisDetokenizationLog(db.redis, 100, () => merchantsWithKeys(db.redis));
    expect((await detokenizations.list({ limit: 10 })).map((e) => e.requestId)).toEqual(['req_detok']);

    // Where the admin service's operator store (its store/redisAdminStores.ts) finds an operator by email.
    const operatorId = await db.redis.get(ADMIN_SLOT + ADMIN_KEYS.operatorEmail + 'ops@acme.test');
    expect(JSON.parse((await db.redis.get(ADMIN_SLOT + ADMIN_KEYS.operator + String(operatorId))) ?? 'null')).toMatchObject({
      id: 'op_1',
      merchantId: 'acme',
    });
    const audit = new RedisAuditLog(db.redis, 100);
    expect(await audit.list({ limit: 10 })).toEqual([{ action: 'key.create', merchantId: 'acme' }]);
    expect(await audit.list({ merchantId: 'acme', limit: 10 })).toHaveLength(1);

    // An answer stored before the upgrade is replayed, not run again, while such answers may live.
    const idempotency = new RedisIdempotencyStore(db.redis, undefined, {
      keyPrefix: '',
      readUntil: legacyRecordsReadUntil(marker, DAY_MS),
    });
    const claimOptions = { lockTtlMs: 1_000, keepMs: DAY_MS, takeOverStale: false, now };
    expect(await idempotency.claim('acme:test:k1', 'fp', claimOptions)).toEqual({ state: 'done', fingerprint: 'fp', sealed: 'answer' });
    expect(legacyRecordsReadUntil(marker, DAY_MS)).toBeGreaterThanOrEqual(now + DAY_MS);
  });

  it('copies once: a second start reads the marker and leaves what changed since as it is', async () => {
    await db.redis.flushall();
    const now = Date.now();
    const { acme } = await writeOldLayout(now);
    await migrateToMerchantSlots(db.redis, { clustered: false, now: () => now });
    const keys = new RedisKeyStoreWithPeek(db.redis);
    await keys.revoke(acme.record.id, new Date(now));
    const again = await migrateToMerchantSlots(db.redis, { clustered: false, now: () => now + 1000 });
    expect(again.migratedAt).toBe(now);
    expect((await keys.get(acme.record.id))?.revokedAt).toBeDefined();
    // The old keys stay for a roll-back.
    expect(await db.redis.exists(`tessera:apikey:${acme.record.id}`)).toBe(1);
  });

  it('copies a long request log whole, in order, with its entry ids', async () => {
    await db.redis.flushall();
    const now = Date.now();
    const { acme } = await writeOldLayout(now);
    const batch = db.redis.pipeline();
    for (let i = 1; i <= 2_500; i++) batch.xadd('tessera:request-log:acme', `${now}-${i}`, 'e', JSON.stringify({ requestId: `req_${i}` }));
    await batch.exec();
    await migrateToMerchantSlots(db.redis, { clustered: false, now: () => now });
    expect(await db.redis.xlen('tessera:request-log:{m:acme}')).toBe(2_501);
    const newest = await new RedisRequestLogStore(db.redis, { maxEntries: 10_000, maxAgeMs: DAY_MS }).range('acme', { count: 2 });
    expect(newest.map((e) => e.requestId)).toEqual(['req_2500', 'req_2499']);
    expect(acme.record.merchantId).toBe('acme');
  });

  it('marks a Redis with no old layout as such: no old idempotency records are looked for', async () => {
    await db.redis.flushall();
    const marker = await migrateToMerchantSlots(db.redis, { clustered: false, now: () => 5 });
    expect(marker).toEqual({ version: 2, migratedAt: 5, legacyData: false });
    expect(legacyRecordsReadUntil(marker, DAY_MS)).toBe(0);
    expect(JSON.parse((await db.redis.get(LAYOUT_KEY)) ?? 'null')).toEqual(marker);
  });
});
