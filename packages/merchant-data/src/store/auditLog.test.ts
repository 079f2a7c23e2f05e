import { createRedisClient } from '@tessera/common/redis';
import { buildAuditRecord } from '../domain/adminAudit';
import { useStoreRedis } from '../testing/redis';
import { RedisAuditLog } from './auditLog';

function auditEntry(action: 'key.created' | 'login.succeeded', merchantId: string | null, n: number) {
  return buildAuditRecord({
    action,
    actor: { id: 'op_1', email: 'ops@x.test' },
    ip: '203.0.113.1',
    merchantId,
    keyId: `key_${n}`,
    now: new Date(),
  });
}

describe('Redis audit log', () => {
  const db = useStoreRedis();
  let audit: RedisAuditLog;
  beforeEach(async () => {
    await db.redis.flushall();
    audit = new RedisAuditLog(db.redis, 4);
  });

  it('lists the audit log newest first, per merchant, capped', async () => {
    for (let i = 0; i < 5; i++) await audit.append(auditEntry('key.created', i % 2 === 0 ? 'acme' : 'globex', i));
    await audit.append(auditEntry('login.succeeded', null, 9));
    const all = await audit.list({ limit: 10 });
    expect(all.map((e) => e.keyId)).toEqual(['key_9', 'key_4', 'key_3', 'key_2']);
    expect((await audit.list({ merchantId: 'acme', limit: 10 })).map((e) => e.keyId)).toEqual(['key_4', 'key_2', 'key_0']);
    expect(await audit.list({ limit: 2 })).toHaveLength(2);
  });

  it('answers 503 service_unavailable when Redis is gone', async () => {
    const dead = createRedisClient('redis://127.0.0.1:1', { commandTimeoutMs: 200, profile: 'server' });
    await expect(new RedisAuditLog(dead, 10).list({ limit: 1 })).rejects.toMatchObject({ code: 'service_unavailable' });
    dead.disconnect();
  });
});
