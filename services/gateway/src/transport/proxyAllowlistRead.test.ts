import { redisUnavailable } from '@tessera/common/redis';
import type { ForwardCall, ForwardResponse__Output } from '@tessera/protos';
import { issueApiKey, type MerchantSettings, RedisApiKeyStore, RedisMerchantSettingsStore } from '@tessera/merchant-data';
import { RedisRateLimitCounter, type WindowCount } from '@tessera/edge';
import { anIdempotency, captureLogger, TEST_PEPPER, tokenReadingUpstreams } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createApp } from './app';
import { RateLimiter } from '@tessera/edge';

/**
 * /v1/proxy reads the merchant's PSP host allowlist in the same Redis round trip as the per-key
 * rate-limit count (docs/PERFORMANCE.md): the read starts before the count has answered, and the
 * count still decides whether the call goes ahead.
 */

/** Per-key counts wait until the test releases them; reads of the allowlist are recorded. */
class HeldCounter extends RedisRateLimitCounter {
  held: Array<() => void> = [];
  override async hit(bucket: string, windowMs: number): Promise<WindowCount> {
    await new Promise<void>((resolve) => this.held.push(resolve));
    return super.hit(bucket, windowMs);
  }
}

class RecordingSettings extends RedisMerchantSettingsStore {
  reads = 0;
  failWith: Error | undefined;
  override async get(merchantId: string): Promise<MerchantSettings | undefined> {
    this.reads++;
    if (this.failWith) throw this.failWith;
    return super.get(merchantId);
  }
}

const forwarded: ForwardCall[] = [];
const { vault, proxy: baseProxy } = tokenReadingUpstreams();
const proxy = {
  ...baseProxy,
  forward: async (request: ForwardCall): Promise<ForwardResponse__Output> => {
    forwarded.push(request);
    return { status: 200, headers: [], body: Buffer.from('{}'), pspMs: 1 };
  },
};

const db = useGatewayRedis();
let app: RunningApp;
let counter: HeldCounter;
let settings: RecordingSettings;
let apiKey: string;

beforeEach(async () => {
  forwarded.length = 0;
  await db.redis.flushall();
  counter = new HeldCounter(db.redis);
  settings = new RecordingSettings(db.redis);
  // Written through a store of its own: only the gateway's reads are counted.
  await new RedisMerchantSettingsStore(db.redis).setPspHosts('m_1', ['psp.example'], new Date());
  const store = new RedisApiKeyStore(db.redis);
  const issued = issueApiKey({ merchantId: 'm_1', mode: 'test', allowedCidrs: [], pepper: TEST_PEPPER, now: new Date() });
  await store.create(issued.record);
  apiKey = issued.apiKey;
  const { logger } = captureLogger();
  app = await startApp(
    createApp({
      config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: [] },
      logger,
      keyStore: store,
      pepper: TEST_PEPPER,
      idempotency: anIdempotency(db.redis),
      vault,
      proxy,
      merchantSettings: settings,
      rateLimiter: new RateLimiter(counter, { RATE_LIMIT_PER_KEY_PER_SECOND: 1, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 }, logger),
    }),
  );
});

afterEach(async () => {
  await app.close();
});

const call = () =>
  app.request('POST', '/v1/proxy', {
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ method: 'post', token: 'tok_x', pspUrl: 'https://psp.example/charges', pspHeaders: {}, pspBody: '{}' }),
  });

async function whenCountIsHeld(): Promise<void> {
  while (counter.held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A call whose rate-limit count is let through once it is out. */
async function callReleasingCount(): Promise<Awaited<ReturnType<typeof call>>> {
  const pending = call();
  await whenCountIsHeld();
  counter.held.shift()?.();
  return pending;
}

it('reads the PSP host allowlist while the rate-limit count is still out, and forwards with it', async () => {
  const pending = call();
  await whenCountIsHeld();
  expect(settings.reads).toBe(1);
  counter.held.shift()?.();
  const res = await pending;
  expect(res.status).toBe(200);
  expect(forwarded).toHaveLength(1);
  expect(forwarded[0]?.allowedHosts).toEqual(['psp.example']);
  expect(settings.reads).toBe(1);
});

it('still refuses a call over the key limit (429) without forwarding it', async () => {
  expect((await callReleasingCount()).status).toBe(200);
  expect((await callReleasingCount()).status).toBe(429);
  expect(forwarded).toHaveLength(1);
});

it('fails the call with 503 when the allowlist cannot be read, and forwards nothing', async () => {
  settings.failWith = redisUnavailable(new Error('connect ECONNREFUSED'));
  expect((await callReleasingCount()).status).toBe(503);
  expect(forwarded).toHaveLength(0);
});
