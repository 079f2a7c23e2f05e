import { Redis } from 'ioredis';
import { type ApiKeyRecord, type ApiKeyStore, hashApiKey, issueApiKey, pepperIdOf, RedisApiKeyStore } from '@tessera/merchant-data';
import { startRedisServer, type RedisServer } from '@tessera/test-support';
import { anIdempotency, captureLogger, tokenReadingUpstreams } from '../testing/fixtures';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
// The keys CLI is the admin service's; these tests check it counts what the gateway re-hashed.
import { runKeysCli } from '../../../admin/src/cli/keys';
import { createApp } from './app';
// The publishable key's routes are the fields service's: one pepper rule for both services.
import { BROWSER_TOKENS_PATH, frameKeyLookup } from '../../../fields/src/transport/browserRoutes';
import { loadCardFieldsAssets } from '../../../fields/src/transport/cardFieldsPage';
import { createFieldsApp } from '../../../fields/src/transport/fieldsApp';

const OLD = 'old-pepper-old-pepper-old-pepper-0001';
const MIDDLE = 'mid-pepper-mid-pepper-mid-pepper-0003';
const NEW = 'new-pepper-new-pepper-new-pepper-0002';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

const running: RunningApp[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) await app.close();
});

async function gateway(keyStore: ApiKeyStore, pepper: string, previousPeppers: string[] = []): Promise<RunningApp> {
  const app = await startApp(
    createApp({
      config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: [] },
      logger: captureLogger().logger,
      keyStore,
      pepper,
      previousPeppers,
      idempotency: anIdempotency(redis),
      ...tokenReadingUpstreams(),
    }),
  );
  running.push(app);
  return app;
}

/** The fields service's app on the same key store: the browser routes, with no vault (no card reaches it). */
async function fieldsService(keyStore: ApiKeyStore, pepper: string, previousPeppers: string[] = []): Promise<RunningApp> {
  const logger = captureLogger().logger;
  const app = await startApp(
    createFieldsApp({
      assets: loadCardFieldsAssets(),
      logger,
      lookupKey: frameKeyLookup({ keyStore, pepper, previousPeppers, logger, now: () => new Date() }),
      browser: {
        auth: { keyStore, pepper, previousPeppers, fieldsOrigin: FIELDS, now: () => new Date() },
        vault: tokenReadingUpstreams().vault,
      },
    }),
  );
  running.push(app);
  return app;
}

async function statusWith(app: RunningApp, apiKey: string): Promise<number> {
  return (await app.request('GET', '/v1/token/tok.AAAABBBBCCCCDDDDEEEEFF', { headers: { 'x-api-key': apiKey } })).status;
}

const FIELDS = 'https://fields.example';
const SHOP = 'https://shop.example';

/**
 * What the card fields' call to the browser route gets with a publishable key: 401 when the key is
 * not found; the empty body's 400 once the key has passed (no card, so no vault is needed).
 */
async function browserStatusWith(app: RunningApp, apiKey: string): Promise<number> {
  const res = await app.request('POST', BROWSER_TOKENS_PATH, {
    headers: { 'x-api-key': apiKey, origin: FIELDS, 'x-tessera-parent-origin': SHOP, 'content-type': 'application/json' },
    body: '{}',
  });
  return res.status;
}

/** Rehashing on use is not awaited by the request: wait until the store shows it. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the key was not moved to the new pepper');
}

function keyUnder(pepper: string): { apiKey: string; record: ApiKeyRecord } {
  return issueApiKey({ merchantId: 'm_test', mode: 'test', allowedCidrs: [], pepper, now: new Date() });
}

function publishableKeyUnder(pepper: string): { apiKey: string; record: ApiKeyRecord } {
  return issueApiKey({
    merchantId: 'm_test',
    mode: 'test',
    kind: 'publishable',
    allowedCidrs: [],
    allowedOrigins: [SHOP],
    pepper,
    now: new Date(),
  });
}

const stores: Array<[string, () => Promise<ApiKeyStore>]> = [
  [
    'in Redis',
    async () => {
      await redis.flushall();
      return new RedisApiKeyStore(new Redis(server.url));
    },
  ],
];

describe.each(stores)('API-key pepper rotation (key store %s)', (_name, openStore) => {
  let store: ApiKeyStore;
  beforeEach(async () => {
    store = await openStore();
  });
  afterEach(async () => {
    await store.close();
  });

  /** Each kind of key, with the status its route answers once the key has passed. */
  const kinds = [
    { kind: 'secret key', issue: keyUnder, use: statusWith, serve: gateway, passed: 200 },
    { kind: 'publishable key (browser route)', issue: publishableKeyUnder, use: browserStatusWith, serve: fieldsService, passed: 400 },
  ];

  it.each(kinds)(
    'keeps a $kind made under an old pepper working, moves it to the new one on use, so the old pepper can go',
    async ({ issue, use, serve, passed }) => {
      const { apiKey, record } = issue(OLD);
      await store.create(record);
      // Rotating without listing the old pepper would lock every existing key out.
      expect(await use(await serve(store, NEW), apiKey)).toBe(401);

      // Two rotations since the key was made: found under the oldest of the listed peppers.
      expect(await use(await serve(store, NEW, [MIDDLE, OLD]), apiKey)).toBe(passed);
      await eventually(async () => (await store.findByDigest(hashApiKey(NEW, apiKey)))?.id === record.id);
      expect(await store.findByDigest(hashApiKey(OLD, apiKey))).toBeUndefined();
      expect(await store.get(record.id)).toMatchObject({ digest: hashApiKey(NEW, apiKey), pepperId: pepperIdOf(NEW) });

      expect(await use(await serve(store, NEW), apiKey)).toBe(passed);
    },
  );

  it.each(kinds)('does not let an old pepper revive a revoked $kind, and leaves it where it is', async ({ issue, use, serve }) => {
    const { apiKey, record } = issue(OLD);
    await store.create(record);
    await store.revoke(record.id, new Date());
    expect(await use(await serve(store, NEW, [OLD]), apiKey)).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await store.get(record.id))?.digest).toBe(hashApiKey(OLD, apiKey));
  });

  it('lets a publishable key made under an old pepper frame the card fields, and moves it to the new one', async () => {
    const { apiKey, record } = publishableKeyUnder(OLD);
    await store.create(record);
    const deps = { keyStore: store, pepper: NEW, logger: captureLogger().logger, now: () => new Date() };
    expect(await frameKeyLookup(deps)(apiKey)).toBeUndefined();

    expect(await frameKeyLookup({ ...deps, previousPeppers: [OLD] })(apiKey)).toEqual({ allowedOrigins: [SHOP] });
    await eventually(async () => (await store.get(record.id))?.digest === hashApiKey(NEW, apiKey));
    expect(await frameKeyLookup(deps)(apiKey)).toEqual({ allowedOrigins: [SHOP] });
  });

  it('records the pepper of a key made before records named it, on its next use', async () => {
    const { apiKey, record } = keyUnder(NEW);
    const { pepperId: _dropped, ...unrecorded } = record;
    await store.create(unrecorded);
    expect(await statusWith(await gateway(store, NEW, [OLD]), apiKey)).toBe(200);
    await eventually(async () => (await store.get(record.id))?.pepperId === pepperIdOf(NEW));
  });
});

describe('npm run keys -- rehash-status', () => {
  it('counts usable keys per pepper version, and the ones not yet named', async () => {
    await redis.flushall();
    const store = new RedisApiKeyStore(new Redis(server.url));
    try {
      await store.create(keyUnder(OLD).record);
      await store.create(keyUnder(OLD).record);
      await store.create(keyUnder(NEW).record);
      const { pepperId: _dropped, ...unrecorded } = keyUnder(OLD).record;
      await store.create(unrecorded);
      const revoked = keyUnder(OLD).record;
      await store.create(revoked);
      await store.revoke(revoked.id, new Date());

      const out: string[] = [];
      const env = { REDIS_URL: server.url, API_KEY_PEPPERS: `v1:${OLD},v2:${NEW}`, NODE_ENV: 'test' };
      const code = await runKeysCli(['rehash-status', '--json'], env, { out: (l) => out.push(l), err: () => undefined });
      expect(code).toBe(0);
      expect(JSON.parse(out.join(''))).toEqual({
        current: 'v2',
        byVersion: { v1: 2, v2: 1 },
        publishableByVersion: { v1: 0, v2: 0 },
        unrecorded: 1,
        unknownPepper: 0,
      });
      const text: string[] = [];
      await runKeysCli(['rehash-status'], env, { out: (l) => text.push(l), err: () => undefined });
      expect(text.join('\n')).not.toContain(OLD);
      expect(text).toContain('v2 (current): 1 keys (0 publishable)');
    } finally {
      await store.close();
    }
  });

  it('counts a publishable key on the old pepper until a shopper uses it, then on the current one', async () => {
    await redis.flushall();
    const store = new RedisApiKeyStore(new Redis(server.url));
    try {
      const { apiKey, record } = publishableKeyUnder(OLD);
      await store.create(record);
      const env = { REDIS_URL: server.url, API_KEY_PEPPERS: `v1:${OLD},v2:${NEW}`, NODE_ENV: 'test' };
      const status = async (): Promise<unknown> => {
        const out: string[] = [];
        await runKeysCli(['rehash-status', '--json'], env, { out: (l) => out.push(l), err: () => undefined });
        return JSON.parse(out.join(''));
      };
      expect(await status()).toMatchObject({ byVersion: { v1: 1, v2: 0 }, publishableByVersion: { v1: 1, v2: 0 } });

      expect(await browserStatusWith(await fieldsService(store, NEW, [OLD]), apiKey)).toBe(400);
      await eventually(async () => (await store.get(record.id))?.pepperId === pepperIdOf(NEW));
      expect(await status()).toMatchObject({ byVersion: { v1: 0, v2: 1 }, publishableByVersion: { v1: 0, v2: 1 } });
    } finally {
      await store.close();
    }
  });
});
