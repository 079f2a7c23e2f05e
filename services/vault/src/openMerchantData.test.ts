import { createLogger } from '@tessera/common';
import { cvcSessionDigest, newCvcSessionSecret, type CvcSessionStore } from '@tessera/merchant-data';
import { startRedis, startRedisCluster, type RedisServer } from '@tessera/test-support';
import { openMerchantData } from './openMerchantData';

jest.setTimeout(60_000);

const logger = createLogger('vault-test', 'silent');

/** Grants of several merchants and tokens (so, in a Cluster, of keys on different masters), each claimed once. */
async function claimsOnce(sessions: CvcSessionStore): Promise<string[]> {
  const now = new Date();
  const outcomes: string[] = [];
  for (let i = 0; i < 6; i++) {
    const secret = newCvcSessionSecret();
    const target = { merchantId: `merchant_${i}`, mode: 'test' as const, token: `tok.${String(i).repeat(22)}` };
    await sessions.create({
      digest: cvcSessionDigest(secret),
      ...target,
      keyId: 'key_1',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 60_000).toISOString(),
    });
    outcomes.push(await sessions.claim(cvcSessionDigest(secret), target, now), await sessions.claim(cvcSessionDigest(secret), target, now));
    await sessions.release(cvcSessionDigest(secret));
    outcomes.push(await sessions.claim(cvcSessionDigest(secret), target, now));
  }
  return [...new Set(outcomes)];
}

describe('the CVC sessions the vault claims, on the card store’s Redis', () => {
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  it('works on one Redis (REDIS_URL)', async () => {
    redis = await startRedis();
    const opened = await openMerchantData({ REDIS_URL: redis.url, REDIS_CLUSTER_NODES: [], REDIS_COMMAND_TIMEOUT_MS: 1000 }, logger);
    try {
      expect(await claimsOnce(opened.sessions)).toEqual(['claimed', 'used']);
    } finally {
      await opened.close();
    }
  });

  it('works on a Redis Cluster (REDIS_CLUSTER_NODES): each command touches one key, so one slot', async () => {
    const cluster = await startRedisCluster();
    redis = cluster;
    const opened = await openMerchantData(
      { REDIS_URL: undefined, REDIS_CLUSTER_NODES: cluster.nodes, REDIS_COMMAND_TIMEOUT_MS: 1000 },
      logger,
    );
    try {
      expect(await claimsOnce(opened.sessions)).toEqual(['claimed', 'used']);
    } finally {
      await opened.close();
    }
  });
});
