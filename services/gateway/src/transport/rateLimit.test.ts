import pino from 'pino';
import { createLogger, type Logger } from '@tessera/common';
import type { TokenRecord__Output } from '@tessera/protos';
import { issueApiKey } from '../domain/apiKeys';
import { MemoryApiKeyStore } from '../store/memoryApiKeyStore';
import { MemoryRateLimitCounter, type RateLimitCounter } from '../store/rateLimitCounter';
import { startApp, type RunningApp, type TestResponse } from '../testing/http';
import { createApp } from './app';
import { RateLimiter, type RateLimitConfig } from './rateLimit';
import type { ProxyApi, VaultApi } from './upstreams';

const PEPPER = 'unit-test-pepper-unit-test-pepper-0123';

const record: TokenRecord__Output = {
  token: 'tok.AAAABBBBCCCCDDDDEEEEFF',
  last4: '4242',
  brand: 'visa',
  expiryMonth: 12,
  expiryYear: 2035,
  createdAt: '2030-01-01T00:00:00.000Z',
  expiresAt: '2036-01-01T00:00:00.000Z',
  cvvAvailable: false,
  holderNameAvailable: false,
};

/** Only GET /v1/token is exercised: the vault answers it, nothing else is reached. */
const vault = { getToken: async () => record, ready: async () => ({ ready: true, detail: '' }), close() {} } as unknown as VaultApi;
const proxy = { ready: async () => ({ ready: true, detail: '' }), close() {} } as unknown as ProxyApi;

function captureLogger(): { logger: Logger; text: () => string } {
  const chunks: string[] = [];
  const logger = createLogger('gateway-test', 'debug');
  (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = { write: (line: string) => chunks.push(line) };
  return { logger, text: () => chunks.join('') };
}

interface Setup {
  app: RunningApp;
  keys: string[];
  logs: () => string;
  get: (apiKey: string | undefined, ip?: string) => Promise<TestResponse>;
}

/** The gateway trusts 127.0.0.1 as a proxy, so each test can speak for several client addresses. */
async function setUp(limits: RateLimitConfig, counter: RateLimitCounter = new MemoryRateLimitCounter()): Promise<Setup> {
  const store = new MemoryApiKeyStore();
  const keys: string[] = [];
  for (const merchantId of ['m_a', 'm_b']) {
    const issued = issueApiKey({ merchantId, mode: 'test', allowedCidrs: [], pepper: PEPPER, now: new Date() });
    await store.create(issued.record);
    keys.push(issued.apiKey);
  }
  const { logger, text } = captureLogger();
  const app = await startApp(
    createApp({
      config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: ['127.0.0.1/32'] },
      logger,
      keyStore: store,
      pepper: PEPPER,
      vault,
      proxy,
      rateLimiter: new RateLimiter(counter, limits, logger),
    }),
  );
  const get = (apiKey: string | undefined, ip = '198.51.100.1') =>
    app.request('GET', `/v1/token/${record.token}`, {
      headers: { ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }), 'x-forwarded-for': ip },
    });
  return { app, keys, logs: text, get };
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
    // A stopped clock: every request falls into the same one-second window.
    s = await setUp(
      { RATE_LIMIT_PER_KEY_PER_SECOND: 3, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 },
      new MemoryRateLimitCounter(() => 5_000),
    );
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
    await new Promise((r) => setTimeout(r, 1100));
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

  it('enforces nothing when both limits are 0', async () => {
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 0, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 });
    for (let i = 0; i < 20; i++) expect((await s.get(s.keys[0])).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await s.get('tsk_test_nope')).status).toBe(401);
  });

  it('fails open, and logs it, when the counter store cannot answer', async () => {
    const broken: RateLimitCounter = {
      hit: () => Promise.reject(new Error('redis down')),
      peek: () => Promise.reject(new Error('redis down')),
    };
    s = await setUp({ RATE_LIMIT_PER_KEY_PER_SECOND: 1, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 1 }, broken);
    for (let i = 0; i < 3; i++) expect((await s.get(s.keys[0])).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await s.get('tsk_test_nope')).status).toBe(401);
    expect(s.logs()).toContain('rate limit store unavailable');
    expect(s.logs()).not.toContain(s.keys[0]);
  });
});
