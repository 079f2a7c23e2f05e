import express from 'express';
import pino from 'pino';
import { RateLimiter, RedisRateLimitCounter, setContext } from '@tessera/edge';
import { issueApiKey, RedisApiKeyStore, RedisPageInventoryStore, pageIdOf } from '@tessera/merchant-data';
import { startApp, TEST_PEPPER, type RunningApp } from '../testing/fixtures';
import { useFieldsRedis } from '../testing/redis';
import { registerPageReportRoutes } from './pageReportRoutes';

const db = useFieldsRedis();
const SHOP = 'https://shop.example';
const TESSERA_JS = 'https://fields.example/js/v1/tessera.js';
const SRI = 'sha384-' + 'C'.repeat(64);

describe('the SAQ A kit intake (POST /v1/browser/page-reports, /v1/browser/csp-reports)', () => {
  let running: RunningApp;
  let key: string;
  let inventory: RedisPageInventoryStore;
  const perSecond = 3;

  // The test Redis is emptied after each test: each gets its key again.
  beforeEach(async () => {
    const issued = issueApiKey({
      merchantId: 'shop',
      mode: 'test',
      kind: 'publishable',
      allowedCidrs: [],
      allowedOrigins: [SHOP],
      pepper: TEST_PEPPER,
      now: new Date(),
    });
    await new RedisApiKeyStore(db.redis).create(issued.record);
    key = issued.apiKey;
  });

  beforeAll(async () => {
    const keyStore = new RedisApiKeyStore(db.redis);
    inventory = new RedisPageInventoryStore(db.redis);
    const logger = pino({ level: 'silent' });
    const app = express();
    // The fields app sets each request's context before any route (fieldsApp.ts).
    app.use((_req, res, next) => {
      setContext(res, { requestId: 'req_test', startedAt: process.hrtime.bigint() });
      next();
    });
    registerPageReportRoutes(app, {
      inventory,
      now: () => new Date(),
      logger,
      trustedProxies: [],
      auth: {
        keyStore,
        pepper: TEST_PEPPER,
        previousPeppers: [],
        moveToCurrentPepper: async () => true,
        now: () => new Date(),
        rateLimiter: new RateLimiter(
          new RedisRateLimitCounter(db.redis),
          { RATE_LIMIT_PER_KEY_PER_SECOND: perSecond, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 100 },
          logger,
        ),
      },
    });
    running = await startApp(app);
  });
  afterAll(() => running.close());

  const report = (body: unknown, origin = SHOP, k = key) =>
    running.request('POST', `/v1/browser/page-reports?key=${k}`, {
      headers: { origin, 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify(body),
    });

  it('keeps the scripts a page on an allowed origin reports, with nothing of its query', async () => {
    const res = await report({
      page: `${SHOP}/checkout?order=77`,
      scripts: [{ src: TESSERA_JS, integrity: SRI }],
      csp: ["script-src 'self'"],
    });
    expect(res.status).toBe(204);
    const pages = await inventory.listPages('shop', 'test');
    expect(pages).toMatchObject([{ id: pageIdOf(SHOP, '/checkout'), origin: SHOP, path: '/checkout', policy: "script-src 'self'" }]);
    const detail = await inventory.pageDetail('shop', 'test', pages[0]!.id, { events: 5, violations: 5 });
    expect(detail.scripts).toMatchObject([{ url: TESSERA_JS, hash: SRI, hashSource: 'integrity' }]);
    expect(JSON.stringify(await db.redis.hgetall(`tessera:page-inventory:{m:shop}:test:pages`))).not.toContain('order=77');
  });

  it('refuses a page on another origin, a page URL of another origin, a bogus key and a body that is not JSON', async () => {
    expect((await report({ page: 'https://evil.example/x', scripts: [] }, 'https://evil.example')).json().error.code).toBe(
      'origin_not_allowed',
    );
    expect((await report({ page: 'https://evil.example/x', scripts: [] })).json().error.code).toBe('parameter_invalid');
    expect((await report({ page: `${SHOP}/x` }, SHOP, `tpk_test_${'z'.repeat(38)}`)).status).toBe(401);
    const notJson = await running.request('POST', `/v1/browser/page-reports?key=${key}`, {
      headers: { origin: SHOP, 'content-type': 'text/plain' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
  });

  it('takes both CSP violation report formats for a page the key allows, answers the preflight, and skips other sites', async () => {
    const preflight = await running.request('OPTIONS', `/v1/browser/csp-reports?key=${key}`, {
      headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toBe('content-type');
    const legacy = await running.request('POST', `/v1/browser/csp-reports?key=${key}`, {
      headers: { 'content-type': 'application/csp-report' },
      body: JSON.stringify({
        'csp-report': {
          'document-uri': `${SHOP}/pay`,
          'blocked-uri': 'https://evil.example/a.js',
          'effective-directive': 'script-src-elem',
          'original-policy': "script-src 'self'",
        },
      }),
    });
    expect(legacy.status).toBe(204);
    const modern = await running.request('POST', `/v1/browser/csp-reports?key=${key}`, {
      headers: { 'content-type': 'application/reports+json', origin: SHOP },
      body: JSON.stringify([
        { type: 'csp-violation', body: { documentURL: `${SHOP}/pay`, blockedURL: 'inline', effectiveDirective: 'script-src-elem' } },
        {
          type: 'csp-violation',
          body: { documentURL: 'https://other.example/pay', blockedURL: 'inline', effectiveDirective: 'script-src-elem' },
        },
      ]),
    });
    expect(modern.status).toBe(204);
    const detail = await inventory.pageDetail('shop', 'test', pageIdOf(SHOP, '/pay'), { events: 5, violations: 5 });
    expect(detail.violations.map((v) => v.blockedUrl)).toEqual(['inline', 'https://evil.example/a.js']);
    expect((await inventory.listPages('shop', 'test')).map((p) => p.origin)).not.toContain('https://other.example');
    const elsewhere = await running.request('POST', `/v1/browser/csp-reports?key=${key}`, {
      headers: { 'content-type': 'application/csp-report' },
      body: JSON.stringify({ 'csp-report': { 'document-uri': 'https://other.example/pay', 'blocked-uri': 'inline' } }),
    });
    expect(elsewhere.json().error.code).toBe('origin_not_allowed');
  });

  it('refuses reports past the per-key limit with 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < perSecond + 3; i++) statuses.push((await report({ page: `${SHOP}/checkout`, scripts: [] })).status);
    expect(statuses).toContain(429);
  });
});

describe('the SAQ A kit intake, refused bodies', () => {
  let running: RunningApp;
  beforeAll(async () => {
    const logger = pino({ level: 'silent' });
    const app = express();
    app.use((_req, res, next) => {
      setContext(res, { requestId: 'req_test', startedAt: process.hrtime.bigint() });
      next();
    });
    registerPageReportRoutes(app, {
      inventory: new RedisPageInventoryStore(db.redis),
      now: () => new Date(),
      logger,
      trustedProxies: [],
      auth: {
        keyStore: new RedisApiKeyStore(db.redis),
        pepper: TEST_PEPPER,
        previousPeppers: [],
        moveToCurrentPepper: async () => true,
        now: () => new Date(),
        rateLimiter: new RateLimiter(
          new RedisRateLimitCounter(db.redis),
          { RATE_LIMIT_PER_KEY_PER_SECOND: 0, RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 0 },
          logger,
        ),
      },
    });
    running = await startApp(app);
  });
  afterAll(() => running.close());

  it('answers a body over the limit with 413 in the error envelope, before looking at the key', async () => {
    const res = await running.request('POST', `/v1/browser/page-reports?key=tpk_test_${'a'.repeat(38)}`, {
      headers: { origin: SHOP, 'content-type': 'text/plain' },
      body: 'x'.repeat(200_000),
    });
    expect(res.status).toBe(413);
    expect(res.json().error).toBeDefined();
  });
});
