import { cvcSessionDigest, newCvcSessionSecret, type CvcSessionRecord } from '../domain/cvcSessions';
import { RedisCvcSessionStore, type CvcSessionStore } from './cvcSessionStore';
import { useStoreRedis } from '../testing/redis';

const NOW = new Date();
const TOKEN = 'tok.AAAAAAAAAAAAAAAAAAAAAA';
const TARGET = { merchantId: 'shop', mode: 'test' as const, token: TOKEN };

function aSession(overrides: Partial<CvcSessionRecord> = {}): { record: CvcSessionRecord; secret: string } {
  const secret = newCvcSessionSecret();
  const record: CvcSessionRecord = {
    digest: cvcSessionDigest(secret),
    ...TARGET,
    keyId: 'key_1',
    createdAt: NOW.toISOString(),
    expiresAt: new Date(NOW.getTime() + 60_000).toISOString(),
    ...overrides,
  };
  return { record, secret };
}

function behavesAsACvcSessionStore(make: () => CvcSessionStore): void {
  it('grants an open session to exactly one of two concurrent attaches, then answers used', async () => {
    const store = make();
    const { record } = aSession();
    await store.create(record);
    const claims = await Promise.all([store.claim(record.digest, TARGET, NOW), store.claim(record.digest, TARGET, NOW)]);
    expect(claims.sort()).toEqual(['claimed', 'used']);
    expect(await store.claim(record.digest, TARGET, NOW)).toBe('used');
  });

  it('gives a released grant back, for a CVC the vault refused', async () => {
    const store = make();
    const { record } = aSession();
    await store.create(record);
    expect(await store.claim(record.digest, TARGET, NOW)).toBe('claimed');
    await store.release(record.digest);
    expect(await store.claim(record.digest, TARGET, NOW)).toBe('claimed');
  });

  it('reads a grant of another token, merchant or mode as unknown, and leaves it usable', async () => {
    const store = make();
    const { record } = aSession();
    await store.create(record);
    expect(await store.claim(record.digest, { ...TARGET, token: 'tok.BBBBBBBBBBBBBBBBBBBBBB' }, NOW)).toBe('not_found');
    expect(await store.claim(record.digest, { ...TARGET, merchantId: 'other' }, NOW)).toBe('not_found');
    expect(await store.claim(record.digest, { ...TARGET, mode: 'live' }, NOW)).toBe('not_found');
    expect(await store.claim(cvcSessionDigest(newCvcSessionSecret()), TARGET, NOW)).toBe('not_found');
    expect(await store.claim(record.digest, TARGET, NOW)).toBe('claimed');
  });

  it('refuses an expired grant', async () => {
    const store = make();
    const { record } = aSession({ expiresAt: new Date(NOW.getTime() - 1).toISOString() });
    await store.create(record);
    expect(await store.claim(record.digest, TARGET, NOW)).toBe('expired');
  });
}

describe('RedisCvcSessionStore', () => {
  const redis = useStoreRedis();
  behavesAsACvcSessionStore(() => new RedisCvcSessionStore(redis.redis));

  it('keeps only the digest of the secret, and forgets the session an hour after it expires', async () => {
    const { record, secret } = aSession();
    await new RedisCvcSessionStore(redis.redis).create(record);
    const key = `tessera:cvc-session:${record.digest}`;
    const keys = await redis.redis.keys('tessera:cvc-session:*');
    expect(keys).toContain(key);
    expect(keys.join(' ')).not.toContain(secret.slice(5));
    const stored = JSON.stringify(await redis.redis.hgetall(key));
    expect(stored).toContain(TOKEN);
    expect(stored).not.toContain(secret.slice(5));
    const ttl = await redis.redis.pttl(key);
    expect(ttl).toBeGreaterThan(3_600_000);
    expect(ttl).toBeLessThanOrEqual(3_660_000);
  });
});
