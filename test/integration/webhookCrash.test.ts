/**
 * Issue 27, "Done when": delivery loses nothing. The delivering process (the gateway) is killed
 * with SIGKILL mid-stream and a new one started; separately Redis (appendfsync always) is killed
 * with SIGKILL and restarted. Every event recorded before the kill reaches the receiver at least
 * once afterwards, each signed; duplicates carry the same event id, so a receiver can drop them.
 */
import { restartRedis, useStack, waitFor } from './harness';
import { MerchantEvents, setAnswerDelay, WebhookReceiver } from './webhookReceiver';

jest.setTimeout(180_000);

const env = useStack({
  env: {
    WEBHOOK_DELIVERY: 'on',
    WEBHOOK_BACKOFF_BASE_MS: '100',
    WEBHOOK_BACKOFF_MAX_MS: '500',
    WEBHOOK_TIMEOUT_MS: '5000',
    // A dead dispatcher's leases and unread entries are taken over after this long.
    WEBHOOK_LEASE_MS: '2000',
    WEBHOOK_ENDPOINT_CONCURRENCY: '4',
  },
});

let receiver: WebhookReceiver;
let merchant: MerchantEvents;
beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  merchant = await new MerchantEvents(env.stack, env.redis.url).connect();
  // A receiver that takes a moment, so a stream of events is still being delivered at the kill.
  setAnswerDelay(10);
});
afterAll(async () => {
  setAnswerDelay(0);
  await receiver?.stop();
  merchant?.close();
});

const EVENTS = 400;

/** Records EVENTS events over 40 objects, returning their ids in order. */
async function recordEvents(merchantId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < EVENTS; i++) ids.push((await merchant.record(merchantId, `tok_crash${i % 40}x`)).id);
  return ids;
}

/** What the receiver got for `name`: every event id at least once, all verified; how many duplicates. */
function checkEverythingArrived(name: string, recorded: string[]): { duplicates: number } {
  const got = receiver.received.filter((r) => r.endpoint === name && r.status === 200);
  expect(got.every((r) => r.verified)).toBe(true);
  const distinct = new Set(got.map((r) => r.id));
  expect(recorded.filter((id) => !distinct.has(id))).toEqual([]);
  expect([...distinct].filter((id) => !recorded.includes(id))).toEqual([]);
  return { duplicates: got.length - distinct.size };
}

it('delivers every event recorded before the gateway was killed with SIGKILL mid-stream, once a new gateway runs', async () => {
  const merchantId = 'crash-gateway';
  await merchant.endpoint(receiver, merchantId, 'gateway-killed');
  const recorded = await recordEvents(merchantId);
  await waitFor(() => receiver.delivered('gateway-killed').length >= 40, 'the first deliveries', 30_000);

  await env.stack.gateway.stop('SIGKILL');
  const deliveredAtKill = receiver.delivered('gateway-killed').length;
  expect(deliveredAtKill).toBeLessThan(EVENTS);
  // Nothing is delivered while no gateway runs.
  const before = receiver.received.length;
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(receiver.received.length).toBe(before);

  await env.stack.startGatewayReplica();
  await waitFor(() => receiver.delivered('gateway-killed').length === EVENTS, 'every event delivered after the restart', 90_000);
  checkEverythingArrived('gateway-killed', recorded);
});

it('delivers every event recorded before Redis (appendfsync always) was killed with SIGKILL mid-stream, once it is back', async () => {
  const merchantId = 'crash-redis';
  await merchant.endpoint(receiver, merchantId, 'redis-killed');
  const recorded = await recordEvents(merchantId);
  await waitFor(() => receiver.delivered('redis-killed').length >= 40, 'the first deliveries', 30_000);

  await env.redis.process.stop('SIGKILL');
  expect(receiver.delivered('redis-killed').length).toBeLessThan(EVENTS);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await restartRedis(env.redis);

  await waitFor(() => receiver.delivered('redis-killed').length === EVENTS, 'every event delivered after Redis came back', 90_000);
  checkEverythingArrived('redis-killed', recorded);
});
