/**
 * Issue 27, item 3: webhook delivery through a real stack. The gateway's dispatcher reads the
 * events recorded in Redis, the proxy's egress sends them to a receiver on loopback that verifies
 * each signature with the Node SDK. Retries, order per object, independence of endpoints, the
 * disabled state and resend, as a merchant's receiver sees them.
 */
import { RedisWebhookDeliveryStore } from '@tessera/merchant-data';
import { webhookDeliveriesOver } from '../../services/admin/src/app/webhookDeliveriesPort';
import { useStack, waitFor } from './harness';
import { MerchantEvents, WebhookReceiver } from './webhookReceiver';

jest.setTimeout(120_000);

const DISABLE_AFTER_SECONDS = 4;
// Redis with the shipped ACL: the gateway delivers as its own user (the helpers write as the admin user).
const env = useStack({
  redis: { acl: true },
  env: {
    WEBHOOK_DELIVERY: 'on',
    METRICS_PORT: '0',
    WEBHOOK_BACKOFF_BASE_MS: '100',
    WEBHOOK_BACKOFF_MAX_MS: '400',
    // Long enough that a receiver's hanging requests are still open while the other endpoint is served.
    WEBHOOK_TIMEOUT_MS: '20000',
    WEBHOOK_DISABLE_AFTER_SECONDS: String(DISABLE_AFTER_SECONDS),
    WEBHOOK_ENDPOINT_CONCURRENCY: '8',
  },
});

let receiver: WebhookReceiver;
let merchant: MerchantEvents;
beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  merchant = await new MerchantEvents(env.stack, env.redis.url).connect();
});
afterAll(async () => {
  await receiver?.stop();
  merchant?.close();
});

const shop = () => `shop-${Math.random().toString(36).slice(2, 10)}`;

/** Each object's event ids in the order they were recorded. */
function byObject(events: { id: string; data: { object: Record<string, unknown> } }[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const e of events) {
    const key = e.data.object.id as string;
    map.set(key, [...(map.get(key) ?? []), e.id]);
  }
  return map;
}

describe('webhook delivery', () => {
  it('delivers every event once, signed for the endpoint, with exactly the documented body', async () => {
    const merchantId = shop();
    await merchant.endpoint(receiver, merchantId, 'all-events');
    await merchant.endpoint(receiver, merchantId, 'deletions-only', ['token.deleted']);
    const recorded = [];
    for (let i = 0; i < 30; i++)
      recorded.push(await merchant.record(merchantId, `tok_obj${i % 5}xx`, i % 3 === 0 ? 'token.deleted' : 'token.updated'));

    await waitFor(() => receiver.delivered('all-events').length === 30, 'all 30 events delivered', 30_000);
    const deletions = recorded.filter((e) => e.type === 'token.deleted');
    await waitFor(() => receiver.delivered('deletions-only').length === deletions.length, 'the deletions delivered', 30_000);

    const got = receiver.received.filter((r) => r.endpoint === 'all-events');
    expect(got.map((r) => r.id).sort()).toEqual(recorded.map((e) => e.id).sort());
    expect(got.every((r) => r.verified)).toBe(true);
    expect(new Set(got.map((r) => r.keys.join(',')))).toEqual(new Set(['id,type,created,mode,data']));
    expect(receiver.delivered('deletions-only').sort()).toEqual(deletions.map((e) => e.id).sort());
    // Each object's events in the order they happened.
    for (const [objectId, ids] of byObject(recorded)) {
      expect([objectId, got.filter((r) => r.objectId === objectId).map((r) => r.id)]).toEqual([objectId, ids]);
    }
  });

  it('retries a receiver that answers 500 for a while, then delivers everything, in order per object', async () => {
    const merchantId = shop();
    let failures = 25;
    await merchant.endpoint(receiver, merchantId, 'flaky', ['*'], () => (failures-- > 0 ? 500 : 200));
    const recorded = [];
    for (let i = 0; i < 20; i++) recorded.push(await merchant.record(merchantId, `tok_flaky${i % 4}x`));

    await waitFor(() => receiver.delivered('flaky').length === 20, 'all 20 events delivered', 60_000);
    const got = receiver.received.filter((r) => r.endpoint === 'flaky');
    expect(got.filter((r) => r.status === 500).length).toBe(25);
    expect(got.every((r) => r.verified)).toBe(true);
    const delivered = receiver.delivered('flaky');
    for (const [objectId, ids] of byObject(recorded)) {
      const firstSuccesses = delivered.filter((id) => ids.includes(id));
      expect([objectId, firstSuccesses]).toEqual([objectId, ids]);
    }
    // The attempts are in the endpoint's delivery log, newest first, never more than 100.
    const store = new RedisWebhookDeliveryStore(merchant.redis);
    const endpoint = (await merchant.endpoints.list(merchantId, 'test'))[0];
    const log = await store.log(merchantId, endpoint?.id as string);
    expect(log.length).toBe(45);
    expect(log.filter((l) => l.outcome === 'failed').every((l) => l.status === 500 && l.nextAttemptAt !== undefined)).toBe(true);
    expect(log.filter((l) => l.outcome === 'succeeded').length).toBe(20);
  });

  it('keeps delivering to endpoint B while endpoint A’s receiver hangs', async () => {
    const merchantId = shop();
    await merchant.endpoint(receiver, merchantId, 'hangs', ['*'], () => 'hang');
    await merchant.endpoint(receiver, merchantId, 'healthy');
    const recorded = [];
    for (let i = 0; i < 20; i++) recorded.push(await merchant.record(merchantId, `tok_hang${i}xx`));

    await waitFor(() => receiver.delivered('healthy').length === 20, 'B got all 20 events', 30_000);
    expect(receiver.delivered('healthy').sort()).toEqual(recorded.map((e) => e.id).sort());
    // B was served in full while A's first attempts were all still hanging (a deadline of 20 s):
    // one per object, up to WEBHOOK_ENDPOINT_CONCURRENCY, none ended.
    expect(receiver.delivered('hangs')).toEqual([]);
    expect(receiver.hangingOpen).toBe(8);
    expect(receiver.hangingClosed).toBe(0);
    receiver.answer('hangs', () => 200);
    receiver.releaseHanging();
    await waitFor(() => receiver.delivered('hangs').length === 20, 'A got all 20 events once it answered', 60_000);
  });

  it('disables an endpoint that failed for the whole disable period and tells the merchant’s other endpoints', async () => {
    const merchantId = shop();
    const failing = await merchant.endpoint(receiver, merchantId, 'always-fails', ['*'], () => 503);
    await merchant.endpoint(receiver, merchantId, 'watcher', ['webhook_endpoint.disabled']);
    await merchant.record(merchantId, 'tok_doomed1x');

    await waitFor(
      async () => (await merchant.endpoints.get(merchantId, 'test', failing.id))?.status === 'disabled',
      'the endpoint disabled',
      30_000,
    );
    const disabled = await merchant.endpoints.get(merchantId, 'test', failing.id);
    expect(disabled?.disabledReason).toMatch(/^failing_since:\d{4}-/);
    await waitFor(() => receiver.delivered('watcher').length === 1, 'the disabled event delivered', 30_000);
    const notice = receiver.received.find((r) => r.endpoint === 'watcher');
    expect(notice).toMatchObject({ type: 'webhook_endpoint.disabled', objectId: failing.id, verified: true });
    // The endpoint never received its own disabling, and nothing more once disabled.
    const attempts = receiver.received.filter((r) => r.endpoint === 'always-fails');
    expect(attempts.every((r) => r.type === 'token.updated')).toBe(true);
    const { events } = merchant;
    const listed = await events.list(merchantId, 'test', { limit: 10, type: 'webhook_endpoint.disabled' });
    expect(listed.data.map((e) => e.data.object)).toEqual([
      { id: failing.id, status: 'disabled', failingSince: expect.any(Number) as number },
    ]);
  });

  it('resends an event already delivered', async () => {
    const merchantId = shop();
    const endpoint = await merchant.endpoint(receiver, merchantId, 'replayed');
    const event = await merchant.record(merchantId, 'tok_replay1x');
    await waitFor(() => receiver.delivered('replayed').length === 1, 'the first delivery', 30_000);

    // What the dashboard's and the CLI's Resend call (the admin service's port over the stores).
    const deliveries = webhookDeliveriesOver(new RedisWebhookDeliveryStore(merchant.redis), merchant.events);
    expect(await deliveries.resend(merchantId, 'test', endpoint.id, event.id)).toBe('queued');
    expect(await deliveries.resend(merchantId, 'live', endpoint.id, event.id)).toBe('event_not_found');
    expect(await deliveries.resend(merchantId, 'test', endpoint.id, 'evt_AAAAAAAAAAAAAAAA')).toBe('event_not_found');
    await waitFor(
      () => receiver.received.filter((r) => r.endpoint === 'replayed' && r.status === 200).length === 2,
      'the resent delivery',
      30_000,
    );
    expect(receiver.received.filter((r) => r.endpoint === 'replayed').map((r) => [r.id, r.verified])).toEqual([
      [event.id, true],
      [event.id, true],
    ]);
  });

  it('sends no event recorded before the merchant’s first endpoint existed, and logs no URL or secret', async () => {
    const merchantId = shop();
    const early = await merchant.record(merchantId, 'tok_early1x');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const endpoint = await merchant.endpoint(receiver, merchantId, 'late-comer');
    const later = await merchant.record(merchantId, 'tok_later1x');
    await waitFor(() => receiver.delivered('late-comer').length === 1, 'the later event', 30_000);
    expect(receiver.delivered('late-comer')).toEqual([later.id]);
    expect(receiver.delivered('late-comer')).not.toContain(early.id);
    const logs = env.stack.logs();
    expect(logs).not.toContain('/late-comer');
    expect(logs).not.toContain('whsec_');
    expect(logs).not.toContain(endpoint.url);
  });

  it('reports queue depth, the oldest undelivered event’s age and outcomes on the gateway’s /metrics, with no merchant, URL or id', async () => {
    const url = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(env.stack.gateway.output)?.[1];
    const text = await (await fetch(url as string)).text();
    // Every sample also carries service="gateway".
    const value = (name: string, label = '') =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${name}{`) && l.includes(label))
          ?.split(' ')
          .pop(),
      );
    expect(value('tessera_webhook_deliveries_total', 'outcome="succeeded"')).toBeGreaterThanOrEqual(100);
    expect(value('tessera_webhook_deliveries_total', 'outcome="failed"')).toBeGreaterThanOrEqual(25);
    // The disabled endpoint keeps its undelivered event queued.
    expect(value('tessera_webhook_queue_depth')).toBeGreaterThanOrEqual(1);
    expect(value('tessera_webhook_oldest_undelivered_seconds')).toBeGreaterThan(0);
    const webhookLines = text.split('\n').filter((l) => l.startsWith('tessera_webhook_'));
    expect(webhookLines.join('\n')).not.toMatch(/shop-|we_|evt_|127\.0\.0\.1/);
  });
});
