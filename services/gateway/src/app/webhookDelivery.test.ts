import { Registry } from 'prom-client';
import { TesseraError } from '@tessera/common';
import { waitFor } from '@tessera/test-support';
import {
  buildEvent,
  newWebhookEndpointId,
  RedisEventStore,
  RedisWebhookDeliveryStore,
  RedisWebhookEndpointStore,
  type WebhookEndpointRecord,
} from '@tessera/merchant-data';
import type { WebhookDeliveryAnswer, WebhookDeliveryCall } from '@tessera/protos';
import { captureLogger, TEST_PEPPER } from '../testing/fixtures';
import { useGatewayRedis } from '../testing/redis';
import type { WebhookSender } from './ports';
import { createWebhookDispatcher, type WebhookDeliverySettings, type WebhookDispatcher } from './webhookDelivery';

/** The proxy's DeliverWebhook as the dispatcher sees it: answers set per call by the test. */
class ScriptedSender implements WebhookSender {
  calls: WebhookDeliveryCall[] = [];
  answer: () => Promise<WebhookDeliveryAnswer> = () => Promise.resolve({ status: 200, latencyMs: 1 });
  deliverWebhook(request: WebhookDeliveryCall): Promise<WebhookDeliveryAnswer> {
    this.calls.push(request);
    return this.answer();
  }
}

const SETTINGS: WebhookDeliverySettings = {
  retry: { baseMs: 10, maxMs: 20, windowMs: 60_000 },
  timeoutMs: 1000,
  endpointConcurrency: 4,
  disableAfterMs: 60_000,
  leaseMs: 3000,
  pollMs: 10,
  discoveryMs: 100,
};

describe('the webhook dispatcher', () => {
  const db = useGatewayRedis();
  let dispatcher: WebhookDispatcher | undefined;
  afterEach(async () => {
    await dispatcher?.stop();
    dispatcher = undefined;
  });

  async function setUp(settings: Partial<WebhookDeliverySettings> = {}) {
    const merchantId = `shop-${Math.random().toString(36).slice(2)}`;
    const endpoints = new RedisWebhookEndpointStore(db.redis);
    const events = new RedisEventStore(db.redis);
    const deliveries = new RedisWebhookDeliveryStore(db.redis);
    const endpoint: WebhookEndpointRecord = {
      id: newWebhookEndpointId(),
      merchantId,
      mode: 'test',
      url: 'https://shop.example/private-path',
      enabledEvents: ['*'],
      status: 'enabled',
      createdAt: new Date(Date.now() - 1000).toISOString(),
      secrets: [{ generation: 1, expiresAt: null }],
    };
    await endpoints.create(endpoint);
    const sender = new ScriptedSender();
    const log = captureLogger();
    const metrics = new Registry();
    dispatcher = createWebhookDispatcher({
      deliveries,
      endpoints,
      events,
      sender,
      pepper: TEST_PEPPER,
      logger: log.logger,
      metrics,
      settings: { ...SETTINGS, ...settings },
    });
    const record = async () => {
      const event = buildEvent({ type: 'token.deleted', merchantId, mode: 'test', object: { id: 'tok_abcdefgh' } });
      await events.record(event);
      return event;
    };
    const outcome = async (name: string) =>
      (await metrics.getSingleMetric('tessera_webhook_deliveries_total')?.get())?.values.find((v) => v.labels.outcome === name)?.value ?? 0;
    return { merchantId, endpoint, deliveries, sender, log, record, outcome };
  }

  it('does not count an attempt when the proxy is unavailable, keeps the event queued and sends it once the proxy is back', async () => {
    const s = await setUp();
    s.sender.answer = () => Promise.reject(new TesseraError('service_unavailable'));
    dispatcher?.start();
    const event = await s.record();
    await waitFor(() => s.sender.calls.length >= 1, 'a first try');
    expect(await s.deliveries.log(s.merchantId, s.endpoint.id)).toEqual([]);
    expect((await s.deliveries.queueStats(s.merchantId, s.endpoint.id)).depth).toBe(1);
    expect(await s.outcome('not_sent')).toBeGreaterThanOrEqual(1);

    s.sender.answer = () => Promise.resolve({ status: 204, latencyMs: 7 });
    await waitFor(async () => (await s.deliveries.queueStats(s.merchantId, s.endpoint.id)).depth === 0, 'the delivery');
    expect(await s.deliveries.log(s.merchantId, s.endpoint.id)).toEqual([
      expect.objectContaining({ eventId: event.id, attempt: 1, outcome: 'succeeded', status: 204, latencyMs: 7 }),
    ]);
    // Neither the URL's path nor a secret is logged.
    expect(s.log.text()).not.toContain('private-path');
    expect(s.log.text()).not.toContain('whsec_');
  });

  it('gives a delivery up once its retry window is over, logging gave_up, and removes it from the queue', async () => {
    const s = await setUp({ retry: { baseMs: 10, maxMs: 20, windowMs: 1 } });
    s.sender.answer = () => Promise.reject(new TesseraError('psp_timeout'));
    dispatcher?.start();
    const event = await s.record();
    const log = () => s.deliveries.log(s.merchantId, s.endpoint.id);
    await waitFor(async () => (await log()).some((l) => l.outcome === 'gave_up'), 'giving up');
    // Within the window's last millisecond an attempt may still be scheduled; none after giving up.
    const attempts = (await log()).reverse();
    expect(attempts.at(-1)).toMatchObject({ eventId: event.id, attempt: attempts.length, outcome: 'gave_up', error: 'timeout' });
    expect(attempts.slice(0, -1).every((l) => l.outcome === 'failed')).toBe(true);
    expect((await s.deliveries.queueStats(s.merchantId, s.endpoint.id)).depth).toBe(0);
    expect(await s.outcome('gave_up')).toBe(1);
  });

  it('waits on stop for the attempt in flight and releases the endpoint’s lease', async () => {
    const s = await setUp();
    let finish: (answer: WebhookDeliveryAnswer) => void = () => undefined;
    s.sender.answer = () => new Promise((resolve) => (finish = resolve));
    dispatcher?.start();
    await s.record();
    await waitFor(() => s.sender.calls.length === 1, 'the attempt in flight');
    const stopped = dispatcher?.stop();
    dispatcher = undefined;
    finish({ status: 200, latencyMs: 1 });
    await stopped;
    expect((await s.deliveries.queueStats(s.merchantId, s.endpoint.id)).depth).toBe(0);
    expect(await db.redis.exists(`tessera:webhooks:{m:${s.merchantId}}:lease:${s.endpoint.id}`)).toBe(0);
  });

  it('makes the consumer group again when Redis lost it, and delivers what is recorded afterwards', async () => {
    const s = await setUp();
    dispatcher?.start();
    await s.record();
    await waitFor(() => s.sender.calls.length === 1, 'the first delivery');
    await db.redis.del(`tessera:events:{m:${s.merchantId}}:stream`);
    const after = await s.record();
    await waitFor(() => s.sender.calls.length === 2, 'the delivery after the loss');
    expect(JSON.parse(s.sender.calls[1]?.body.toString() ?? '{}')).toMatchObject({ id: after.id });
  });
});
