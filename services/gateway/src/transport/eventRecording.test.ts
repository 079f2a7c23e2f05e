import { createRedisClient } from '@tessera/common/redis';
import { Registry } from 'prom-client';
import { issueApiKey, RedisApiKeyStore, RedisEventStore } from '@tessera/merchant-data';
import { aTokenRecord, anIdempotency, captureLogger, TEST_PEPPER } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createApp } from './app';
import type { ProxyApi, VaultApi } from '../app/ports';

const db = useGatewayRedis();
const PAN = '4242424242424242';
const card = { number: PAN, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvv: 123 };

/** The token routes with a real event store on a Redis client of its own, which a test can cut. */
async function start() {
  const keyStore = new RedisApiKeyStore(db.redis);
  const key = issueApiKey({
    merchantId: `m_${Math.random().toString(36).slice(2)}`,
    mode: 'test',
    allowedCidrs: [],
    pepper: TEST_PEPPER,
    now: new Date(),
  });
  await keyStore.create(key.record);
  // The services' own client options (no offline queue): once cut, a command fails at once.
  const eventsRedis = createRedisClient(db.server.url, { commandTimeoutMs: 1000, profile: 'server' });
  await eventsRedis.connect();
  const { logger, lines } = captureLogger();
  const metrics = new Registry();
  const vault = {
    tokenize: async () => aTokenRecord(),
    deleteToken: async () => undefined,
  } as unknown as VaultApi;
  const app: RunningApp = await startApp(
    createApp({
      config: { BODY_LIMIT_BYTES: 1_048_576, READY_TIMEOUT_MS: 200, TRUSTED_PROXIES: [] },
      logger,
      keyStore,
      pepper: TEST_PEPPER,
      idempotency: anIdempotency(db.redis),
      vault,
      proxy: {} as ProxyApi,
      metrics,
      events: new RedisEventStore(eventsRedis),
    }),
  );
  const call = (method: string, path: string, body?: unknown) =>
    app.request(method, path, {
      headers: { 'x-api-key': key.apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const failures = async () =>
    (await metrics.getSingleMetric('tessera_events_record_failures_total')?.get())?.values.map((v) => [v.labels.type, v.value]);
  return { app, call, eventsRedis, lines, failures };
}

describe('events recorded by the token routes', () => {
  it('records token.created and token.deleted, listed by GET /v1/events', async () => {
    const s = await start();
    try {
      expect((await s.call('POST', '/v1/token', card)).status).toBe(201);
      expect((await s.call('DELETE', '/v1/token/tok.AAAABBBBCCCCDDDDEEEEFF')).status).toBe(204);
      const list = await s.call('GET', '/v1/events');
      expect(list.status).toBe(200);
      expect(list.json().data.map((e: { type: string }) => e.type)).toEqual(['token.deleted', 'token.created']);
      expect(await s.failures()).toEqual([]);
    } finally {
      s.eventsRedis.disconnect();
      await s.app.close();
    }
  });

  it('answers the merchant’s request when the event cannot be recorded: logged without card data, counted by type', async () => {
    const s = await start();
    try {
      s.eventsRedis.disconnect();
      const created = await s.call('POST', '/v1/token', card);
      expect(created.status).toBe(201);
      expect(created.json()).toMatchObject({ token: 'tok.AAAABBBBCCCCDDDDEEEEFF' });
      expect((await s.call('DELETE', '/v1/token/tok.AAAABBBBCCCCDDDDEEEEFF')).status).toBe(204);
      expect(await s.failures()).toEqual([
        ['token.created', 1],
        ['token.deleted', 1],
      ]);
      const logged = s.lines().filter((line) => line.includes('event not recorded'));
      expect(logged).toHaveLength(2);
      expect(s.lines().join('\n')).not.toContain(PAN);
    } finally {
      await s.app.close();
    }
  });
});
