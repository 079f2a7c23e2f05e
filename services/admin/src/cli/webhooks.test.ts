import { Redis } from 'ioredis';
import type { KeyMode } from '@tessera/common';
import {
  buildEvent,
  RedisAuditLog,
  RedisEventStore,
  RedisWebhookDeliveryStore,
  RedisWebhookEndpointStore,
  webhookSecret,
} from '@tessera/merchant-data';
import { startRedisServer, type RedisServer } from '@tessera/test-support';
import { parseDurationSeconds, runWebhooksCli } from './webhooks';

const PEPPER = 'cli-test-pepper-cli-test-pepper-0123456789';

describe('webhooks CLI', () => {
  let server: RedisServer;
  let env: NodeJS.ProcessEnv;
  let redis: Redis;
  let store: RedisWebhookEndpointStore;

  async function run(argv: string[], environment: NodeJS.ProcessEnv = env) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runWebhooksCli(argv, environment, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out, err };
  }

  async function create(mode: KeyMode = 'test'): Promise<{ id: string; secret: string }> {
    const res = await run([
      'create',
      '--merchant',
      'shop_1',
      '--mode',
      mode,
      '--url',
      'https://shop.example/tessera-events',
      '--events',
      'token.created,form_session.completed',
      '--json',
    ]);
    expect(res).toMatchObject({ code: 0, err: [] });
    return JSON.parse(res.out[0] ?? '');
  }

  beforeAll(async () => {
    server = await startRedisServer();
    env = { REDIS_URL: server.url, API_KEY_PEPPER: PEPPER, NODE_ENV: 'test' };
    redis = new Redis(server.url);
    store = new RedisWebhookEndpointStore(redis);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.flushall();
  });

  it('exits 2 without REDIS_URL, saying to point it at the gateway’s Redis', async () => {
    const res = await run(['list', '--merchant', 'shop_1', '--mode', 'test'], { API_KEY_PEPPER: PEPPER, NODE_ENV: 'development' });
    expect(res.code).toBe(2);
    expect(res.err.join('\n')).toMatch(/REDIS_URL is not set.*the gateway's Redis/s);
  });

  it('creates an endpoint and prints its secret once, the one derived from the gateway’s pepper', async () => {
    const human = await run(['create', '--merchant', 'shop_1', '--mode', 'test', '--url', 'http://127.0.0.1:4242/events', '--events', '*']);
    expect(human.code).toBe(0);
    const [record] = await store.list('shop_1', 'test');
    const secret = webhookSecret(PEPPER, 'shop_1', 'test', record!.id, 1);
    expect(human.out.filter((l) => l.includes('whsec_'))).toEqual([`  ${secret}`]);
    expect(human.out.join('\n')).toContain('only time this secret is shown');

    const json = await create('live');
    expect(json).toMatchObject({ mode: 'live', url: 'https://shop.example/tessera-events', status: 'enabled' });
    expect(json.secret).toBe(webhookSecret(PEPPER, 'shop_1', 'live', json.id, 1));
  });

  it('lists endpoints of one mode without their secrets', async () => {
    const created = await create();
    const table = await run(['list', '--merchant', 'shop_1', '--mode', 'test']);
    expect(table.code).toBe(0);
    expect(table.out[0]).toMatch(/^ID\s+URL\s+EVENTS\s+STATUS\s+CREATED$/);
    expect(table.out[1]).toContain(created.id);
    expect(table.out[1]).toContain('token.created,form_session.completed');
    const json = await run(['list', '--merchant', 'shop_1', '--mode', 'test', '--json']);
    expect(JSON.parse(json.out[0] ?? '')).toMatchObject([{ id: created.id, status: 'enabled' }]);
    expect([...table.out, ...json.out].join('\n')).not.toContain('whsec_');
    expect((await run(['list', '--merchant', 'shop_1', '--mode', 'live'])).out).toEqual(['No live webhook endpoints for shop_1.']);
  });

  it('rotates with an overlap, enables a disabled endpoint, deletes it, and audits each as cli:<user>', async () => {
    const { id } = await create();
    const rotated = await run([
      'rotate-secret',
      '--merchant',
      'shop_1',
      '--mode',
      'test',
      '--endpoint',
      id,
      '--expires-in',
      '1h',
      '--json',
    ]);
    expect(rotated.code).toBe(0);
    const body = JSON.parse(rotated.out[0] ?? '');
    expect(body.secret).toBe(webhookSecret(PEPPER, 'shop_1', 'test', id, 2));
    expect(Date.parse(body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(3500_000);

    await store.setStatus('shop_1', 'test', id, 'disabled', 'failing_since:2026-11-23T00:00:00.000Z');
    expect((await run(['list', '--merchant', 'shop_1', '--mode', 'test'])).out[1]).toContain(
      'disabled (failing_since:2026-11-23T00:00:00.000Z)',
    );
    const enabled = await run(['enable', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id]);
    expect(enabled.out).toEqual([`Enabled ${id}: deliveries to https://shop.example/tessera-events resume.`]);
    expect((await store.get('shop_1', 'test', id))?.status).toBe('enabled');

    expect((await run(['delete', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id])).code).toBe(0);
    expect(await store.list('shop_1', 'test')).toEqual([]);

    const audit = await new RedisAuditLog(redis, 100).list({ merchantId: 'shop_1', limit: 10 });
    expect(audit.map((e) => e.action)).toEqual([
      'webhook_endpoint.deleted',
      'webhook_endpoint.enabled',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.created',
    ]);
    expect(audit.every((e) => e.actor?.startsWith('cli:'))).toBe(true);
    expect(JSON.stringify(audit)).not.toContain('whsec_');
  });

  it('names an unknown endpoint and exits 1', async () => {
    const id = `we_${'x'.repeat(32)}`;
    const res = await run(['delete', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id]);
    expect(res.code).toBe(1);
    expect(res.err).toEqual([`no test webhook endpoint ${id} for merchant shop_1`]);
  });

  it('shows an endpoint’s deliveries as the dispatcher logged them, and queues one event again', async () => {
    const { id } = await create();
    const events = new RedisEventStore(redis);
    const deliveries = new RedisWebhookDeliveryStore(redis);
    const event = buildEvent({ type: 'token.created', merchantId: 'shop_1', mode: 'test', object: { id: 'tok_aaaaaaaa', last4: '4242' } });
    await events.record(event);
    const at = new Date();
    const next = '2026-11-26T13:00:00.000Z';
    const attempt = { eventId: event.id, type: event.type, attempt: 3, outcome: 'failed' as const, error: 'timeout', latencyMs: 10_000 };
    await deliveries.recordFailure('shop_1', id, { ...attempt, at: at.toISOString(), nextAttemptAt: next }, Date.parse(next), at);
    const table = await run(['deliveries', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id]);
    expect(table.code).toBe(0);
    expect(table.out.shift()).toBe('Nothing waits in its queue.');
    expect(table.out[0]).toMatch(/^TIME\s+EVENT\s+TYPE\s+ATTEMPT\s+OUTCOME\s+STATUS\s+LATENCY\s+NEXT ATTEMPT$/);
    expect(table.out[1]).toMatch(
      new RegExp(`${event.id}\\s+token\\.created\\s+3\\s+failed\\s+timeout\\s+10000 ms\\s+${next.replace(/\./g, '\\.')}$`),
    );
    const json = await run(['deliveries', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id, '--json', '--limit', '1']);
    expect(JSON.parse(json.out[0] ?? '')).toEqual({
      endpointId: id,
      deliveries: [expect.objectContaining({ eventId: event.id, responseStatus: null, error: 'timeout' })],
      queued: { depth: 0, oldestCreatedAt: null },
    });

    const resent = await run(['resend', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id, '--event', event.id]);
    expect(resent.code).toBe(0);
    expect((await deliveries.queueHead('shop_1', id, 10)).map((d) => [d.eventId, d.nextAttemptAt])).toEqual([[event.id, 0]]);
    const waiting = await run(['deliveries', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id]);
    expect(waiting.out[0]).toBe(`Waiting in its queue: 1 event (the oldest created ${new Date(event.created * 1000).toISOString()}).`);
    // An event of the other mode is not this endpoint's to resend.
    const live = buildEvent({ type: 'token.created', merchantId: 'shop_1', mode: 'live', object: { id: 'tok_bbbbbbbb', last4: '4242' } });
    await events.record(live);
    const unknown = await run(['resend', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id, '--event', live.id]);
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toContain(`no event ${live.id}`);
  });

  it('forgets a deleted endpoint’s queue and log', async () => {
    const { id } = await create();
    const event = buildEvent({ type: 'token.created', merchantId: 'shop_1', mode: 'test', object: { id: 'tok_aaaaaaaa', last4: '4242' } });
    await new RedisEventStore(redis).record(event);
    const deliveries = new RedisWebhookDeliveryStore(redis);
    await deliveries.requeue('shop_1', id, event, new Date());
    expect((await deliveries.queueStats('shop_1', id)).depth).toBe(1);
    expect((await run(['delete', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', id])).code).toBe(0);
    expect((await deliveries.queueStats('shop_1', id)).depth).toBe(0);
  });

  it.each([
    [['list', '--mode', 'test']],
    [['list', '--merchant', 'shop_1']],
    [['list', '--merchant', 'shop_1', '--mode', 'prod']],
    [['create', '--merchant', 'shop_1', '--mode', 'test', '--events', '*']],
    [['create', '--merchant', 'shop_1', '--mode', 'live', '--url', 'http://shop.example/e', '--events', '*']],
    [['create', '--merchant', 'shop_1', '--mode', 'test', '--url', 'https://shop.example/e', '--events', 'token.stolen']],
    [['delete', '--merchant', 'shop_1', '--mode', 'test']],
    [['delete', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', 'we_short']],
    [['rotate-secret', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', `we_${'x'.repeat(32)}`, '--expires-in', '8d']],
    [['resend', '--merchant', 'shop_1', '--mode', 'test', '--endpoint', `we_${'x'.repeat(32)}`]],
    [['list', '--merchant', 'shop_1', '--mode', 'test', '--url', 'https://x.example/']],
    [['frobnicate']],
  ])('rejects the usage %j with exit 2 and writes nothing', async (argv) => {
    const res = await run(argv);
    expect(res.code).toBe(2);
    expect(res.err.join('\n').length).toBeGreaterThan(0);
    expect(await redis.keys('*')).toEqual([]);
  });

  it('names the flag at fault in a refused URL', async () => {
    const res = await run(['create', '--merchant', 'shop_1', '--mode', 'live', '--url', 'http://shop.example/e', '--events', '*']);
    expect(res.err[0]?.split('\n')[0]).toBe('--url must be https:// for a live key.');
  });

  it('masks a card number typed as an event type in its refusal', async () => {
    const res = await run([
      'create',
      '--merchant',
      'shop_1',
      '--mode',
      'test',
      '--url',
      'https://shop.example/e',
      '--events',
      '4242424242424242',
    ]);
    expect(res.code).toBe(2);
    expect(res.err[0]).toMatch(/^--events /);
    expect(res.err.join('\n')).not.toContain('4242424242424242');
  });

  it('reads durations as seconds', () => {
    expect(parseDurationSeconds('0s')).toBe(0);
    expect(parseDurationSeconds('90')).toBe(90);
    expect(parseDurationSeconds('24h')).toBe(86_400);
    expect(parseDurationSeconds('7d')).toBe(604_800);
    expect(parseDurationSeconds('1w')).toBeUndefined();
  });
});
