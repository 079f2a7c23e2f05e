import { type ApiKeyStore, issueApiKey } from '@tessera/merchant-data';
import { RedisKeyStoreWithPeek } from '@tessera/edge';
import { commandsSentDuring } from '@tessera/test-support';
import { RedisRateLimitCounter, type RateLimitCounter } from '@tessera/edge';
import { aTokenRecord, anIdempotency, captureLogger, TEST_PEPPER, tokenReadingUpstreams } from '../testing/fixtures';
import { startApp, type RunningApp, type TestResponse } from '../../../../packages/edge/src/testing/http';
import { letTimePass, useGatewayRedis } from '../testing/redis';
import { createApp } from './app';
import { RateLimiter, type RateLimitConfig } from '@tessera/edge';

/** Only GET /v1/token is exercised: the vault answers it, nothing else is reached. */
const record = aTokenRecord();
const { vault, proxy } = tokenReadingUpstreams(record);

const db = useGatewayRedis();
beforeEach(() => db.redis.flushall());

interface Setup {
  app: RunningApp;
  store: ApiKeyStore;
  keys: string[];
  /** Ids of `keys`, in the same order. */
  ids: string[];
  logs: () => string;
  get: (apiKey: string | undefined, ip?: string) => Promise<TestResponse>;
}

/**
 * The gateway trusts 127.0.0.1 as a proxy, so each test can speak for several client addresses.
 * Keys and counters live in the test's Redis as in production (one script reads both per
 * request), unless `counter` replaces the counters.
 */
async function setUp(
  limits: RateLimitConfig,
  options: { counter?: RateLimitCounter; allowedCidrs?: string[]; keyLookupCountsInRedis?: boolean } = {},
): Promise<Setup> {
  const store = new RedisKeyStoreWithPeek(db.redis);
  const keys: string[] = [];
  const ids: string[] = [];
  for (const merchantId of ['m_a', 'm_b']) {
    const issued = issueApiKey({
      merchantId,
      mode: 'test',
      allowedCidrs: options.allowedCidrs ?? [],
      pepper: TEST_PEPPER,
      now: new Date(),
    });
    await store.create(issued.record);
    keys.push(issued.apiKey);
    ids.push(issued.record.id);
  }
  const { logger, text } = captureLogger();
  const app = await startApp(
    createApp({
      config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: ['127.0.0.1/32'] },
      logger,
      keyStore: store,
      pepper: TEST_PEPPER,
      idempotency: anIdempotency(db.redis),
      vault,
      proxy,
      rateLimiter: new RateLimiter(options.counter ?? new RedisRateLimitCounter(db.redis), limits, logger),
      ...(options.counter && options.keyLookupCountsInRedis !== true ? {} : { keyLookupWithPeek: store }),
    }),
  );
  const get = (apiKey: string | undefined, ip = '198.51.100.1') =>
    app.request('GET', `/v1/token/${record.token}`, {
      headers: { ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }), 'x-forwarded-for': ip },
    });
  return { app, store, keys, ids, logs: text, get };
}

function expectRateLimited(res: TestResponse, maxRetryAfter: number) {
  expect(res.status).toBe(429);
  expect(res.headers['x-tessera-error']).toBe('rate_limited');
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
  const body = res.json();
  expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', requestId: res.headers['x-request-id'] });
  expect(body.error.message).toContain(`${retryAfter} second`);
}

describe('API rate limits', () => {
  let s: Setup;
  afterEach(async () => {
    await s.app.close();
  });

  it('answers 429 with Retry-After once a key passes its per-second limit, without affecting other keys', async () => {
    // The window opens with the key's first request: the four fall into it.
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 3, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 });
    const [keyA, keyB] = s.keys as [string, string];
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await s.get(keyA)).status);
    expect(statuses).toEqual([200, 200, 200]);
    expectRateLimited(await s.get(keyA), 1);
    expect((await s.get(keyB)).status).toBe(200);
  });

  it('lets the key through again once its window has passed', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 1, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 });
    const key = s.keys[0] as string;
    await s.get(key);
    const second = await s.get(key);
    expectRateLimited(second, 1);
    // The window passes without the test waiting for it.
    await letTimePass(db.redis, 1100);
    expect((await s.get(key)).status).toBe(200);
  });

  it('answers 429 to a client that failed authentication too often, even when it then presents a valid key', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 0, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 3 });
    const wrong = 'tsk_test_' + 'A'.repeat(32);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await s.get(wrong, '203.0.113.9')).status);
    expect(statuses).toEqual([401, 401, 401]);
    expectRateLimited(await s.get(wrong, '203.0.113.9'), 60);
    // Were a valid key let through now, the 429 would be an oracle for guessed keys.
    expectRateLimited(await s.get(s.keys[0], '203.0.113.9'), 60);
    expectRateLimited(await s.get(undefined, '203.0.113.9'), 60);
    // Another client is unaffected.
    expect((await s.get(s.keys[0], '203.0.113.10')).status).toBe(200);
  });

  it('does not count successful requests as failed authentications', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 0, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 2 });
    for (let i = 0; i < 10; i++) expect((await s.get(s.keys[0])).status).toBe(200);
  });

  it('answers a publishable key 403 on every request, not counted as a failed authentication (it is a valid key)', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 0, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 2 });
    const publishable = issueApiKey({
      merchantId: 'm_a',
      mode: 'test',
      kind: 'publishable',
      allowedCidrs: [],
      allowedOrigins: ['https://shop.example'],
      pepper: TEST_PEPPER,
      now: new Date(),
    });
    await s.store.create(publishable.record);
    for (let i = 0; i < 5; i++) {
      const res = await s.get(publishable.apiKey, '203.0.113.20');
      expect(res.status).toBe(403);
      expect(res.headers['x-tessera-error']).toBe('publishable_key_forbidden');
    }
    expect((await s.get(s.keys[0], '203.0.113.20')).status).toBe(200);
    expect(s.logs()).toContain(`"keyId":"${publishable.record.id}"`);
  });

  it('enforces nothing when both limits are 0', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 0, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 });
    for (let i = 0; i < 20; i++) expect((await s.get(s.keys[0])).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await s.get('tsk_test_nope')).status).toBe(401);
  });

  it('fails open, and logs it, when the counter store cannot answer', async () => {
    const broken: RateLimitCounter = {
      hit: () => Promise.reject(new Error('redis down')),
      peek: () => Promise.reject(new Error('redis down')),
      unhit: () => Promise.reject(new Error('redis down')),
    };
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 1, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 1 }, { counter: broken });
    for (let i = 0; i < 3; i++) expect((await s.get(s.keys[0])).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await s.get('tsk_test_nope')).status).toBe(401);
    expect(s.logs()).toContain('rate limit store unavailable');
    expect(s.logs()).not.toContain(s.keys[0]);
  });
});

describe('API rate limits with the keys and counters in Redis', () => {
  let s: Setup;
  afterEach(async () => {
    await s.app.close();
  });
  const setUpHere = (limits: RateLimitConfig, allowedCidrs?: string[]) => setUp(limits, allowedCidrs ? { allowedCidrs } : {});

  it('answers 429 to a client that failed authentication too often, even for a valid key, and not to others', async () => {
    s = await setUpHere({ RATE_LIMIT_PER_KEY_PER_SECOND: 0, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 2 });
    const wrong = 'tsk_test_' + 'A'.repeat(32);
    expect((await s.get(wrong, '203.0.113.9')).status).toBe(401);
    expect((await s.get(wrong, '203.0.113.9')).status).toBe(401);
    expectRateLimited(await s.get(wrong, '203.0.113.9'), 60);
    expectRateLimited(await s.get(s.keys[0], '203.0.113.9'), 60);
    expectRateLimited(await s.get(undefined, '203.0.113.9'), 60);
    expect((await s.get(s.keys[0], '203.0.113.10')).status).toBe(200);
  });

  it('counts only requests that pass every check against the key, so a refused address cannot use up its limit', async () => {
    s = await setUpHere({ RATE_LIMIT_PER_KEY_PER_SECOND: 2, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 }, ['198.51.100.0/24']);
    const key = s.keys[0] as string;
    for (let i = 0; i < 5; i++) expect((await s.get(key, '203.0.113.9')).headers['x-tessera-error']).toBe('ip_not_allowed');
    expect((await s.get(key)).status).toBe(200);
    expect((await s.get(key)).status).toBe(200);
    expectRateLimited(await s.get(key), 1);
  });

  it('refuses a revoked key from the very next request, without counting it against the key', async () => {
    s = await setUpHere({ RATE_LIMIT_PER_KEY_PER_SECOND: 1, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 });
    const [keyA, keyB] = s.keys as [string, string];
    await s.store.revoke(s.ids[0] as string, new Date());
    expect((await s.get(keyA)).headers['x-tessera-error']).toBe('api_key_invalid');
    expect((await s.get(keyA)).headers['x-tessera-error']).toBe('api_key_invalid');
    expect((await s.get(keyB)).status).toBe(200);
    expect(await db.redis.exists(`tessera:ratelimit:key:${s.ids[0]}`)).toBe(0);
  });
});

describe('the failed-auth counter of an address whose Redis master is down or slow (RATE_LIMIT_STORE_TIMEOUT_MS)', () => {
  let s: Setup;
  afterEach(async () => {
    await s.app.close();
  });
  /** The gateway's REDIS_COMMAND_TIMEOUT_MS default: what every request waited for before the deadline. */
  const COMMAND_TIMEOUT_MS = 1_000;
  const limits = { RATE_LIMIT_PER_KEY_PER_SECOND: 100, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 2, RATE_LIMIT_STORE_TIMEOUT_MS: 100 };
  /** The counters in the test's Redis, but the failed-auth ones (the address's slot) answer after `delay` (never, by default). */
  const failedAuthCountersAnsweringAfter = (delayMs?: number): RateLimitCounter => {
    const redis = new RedisRateLimitCounter(db.redis);
    return {
      hit: (bucket, windowMs) => redis.hit(bucket, windowMs),
      unhit: (bucket) => redis.unhit(bucket),
      peek: (bucket) =>
        !bucket.startsWith('authfail:')
          ? redis.peek(bucket)
          : delayMs === undefined
            ? new Promise<never>(() => undefined)
            : new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => redis.peek(bucket)),
    };
  };

  it('answers an authenticated request without waiting for a counter that never answers', async () => {
    s = await setUp(limits, { counter: failedAuthCountersAnsweringAfter(), keyLookupCountsInRedis: true });
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const res = await s.get(s.keys[0], '203.0.113.9');
      expect(res.status).toBe(200);
      // Bound generously: the deadline is 100 ms, the request used to wait the whole command timeout.
      expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS);
    }
    expect(s.logs()).toContain('rate limit store unavailable');
  });

  it('still refuses an address over its failed-auth limit when its counter answers after the key, within the deadline', async () => {
    // A deadline far above the delay: on a loaded machine the event loop alone can take 100 ms.
    s = await setUp(
      { ...limits, RATE_LIMIT_STORE_TIMEOUT_MS: 900 },
      { counter: failedAuthCountersAnsweringAfter(30), keyLookupCountsInRedis: true },
    );
    const wrong = 'tsk_test_' + 'A'.repeat(32);
    expect((await s.get(wrong, '203.0.113.9')).status).toBe(401);
    expect((await s.get(wrong, '203.0.113.9')).status).toBe(401);
    // The key's script answers first; were the counter not waited for, a valid key would pass here.
    expectRateLimited(await s.get(s.keys[0], '203.0.113.9'), 60);
    expect((await s.get(s.keys[0], '203.0.113.10')).status).toBe(200);
  });
});

describe('Redis work of an authenticated request', () => {
  let s: Setup;
  // Each test sets up its own app: every one is closed, or its server keeps the worker alive.
  afterEach(async () => {
    await s.app.close();
  });

  it('is two script calls by SHA sent together: the key with its counter (its merchant’s slot), the failed-auth counter (the address’s); plus last use at most once a second', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 100, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 30 });
    const key = s.keys[0] as string;
    // The first request of a key in a process also reads where the key is (its digest index).
    const first = await commandsSentDuring(db.server.url, async () => {
      expect((await s.get(key)).status).toBe(200);
    });
    // (EVAL: each script's text goes once per connection.)
    expect(first.filter((command) => command !== 'hset').sort()).toEqual(['eval', 'eval', 'get']);
    const sent = await commandsSentDuring(db.server.url, async () => {
      for (let i = 0; i < 5; i++) expect((await s.get(key)).status).toBe(200);
    });
    const hset = sent.filter((command) => command === 'hset').length;
    expect(sent.filter((command) => command !== 'hset')).toEqual(Array(10).fill('evalsha'));
    expect(hset).toBeLessThanOrEqual(1);
    expect(await db.redis.get(`tessera:ratelimit:key:{m:m_a}:${s.ids[0]}`)).toBe('6');
  });

  it('does not use up the limit of a valid key presented by a client blocked for failed authentications', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 100, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 1 });
    expect((await s.get('tsk_test_wrong', '203.0.113.50')).status).toBe(401);
    expect((await s.get(s.keys[0], '203.0.113.50')).status).toBe(429);
    let counted: string | null = null;
    for (let i = 0; i < 100 && counted !== '0'; i++) {
      counted = await db.redis.get(`tessera:ratelimit:key:{m:m_a}:${s.ids[0]}`);
      if (counted !== '0') await new Promise((resolve) => setImmediate(resolve));
    }
    expect(counted).toBe('0');
  });

  it('takes back a request the lookup counted when the decision then refuses it', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 100, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 });
    const id = s.ids[0] as string;
    // An expiry the script reads as a future time but the gateway cannot parse: the gateway fails closed.
    const stored = JSON.parse((await db.redis.get(`tessera:apikey:{m:m_a}:${id}`)) as string) as Record<string, unknown>;
    await db.redis.set(`tessera:apikey:{m:m_a}:${id}`, JSON.stringify({ ...stored, expiresAt: '9999-unreadable' }));
    expect((await s.get(s.keys[0])).headers['x-tessera-error']).toBe('api_key_invalid');
    // Taken back after the answer, without holding it up.
    let counted: string | null = null;
    for (let i = 0; i < 100 && counted !== '0'; i++) {
      counted = await db.redis.get(`tessera:ratelimit:key:{m:m_a}:${id}`);
      if (counted !== '0') await new Promise((resolve) => setImmediate(resolve));
    }
    expect(counted).toBe('0');
  });
});
