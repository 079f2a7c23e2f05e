import { buildEvent } from '../domain/events';
import { useStoreRedis } from '../testing/redis';
import { RedisEventStore } from './eventStore';
import { deliveryOrder, eventStreamKey, RedisWebhookDeliveryStore, type DeliveryAttempt } from './webhookDeliveryStore';

describe('RedisWebhookDeliveryStore', () => {
  const redis = useStoreRedis();
  const NOW = new Date();

  const tokenEvent = (merchantId: string, objectId: string) =>
    buildEvent({ type: 'token.created', merchantId, mode: 'test', object: { id: objectId, last4: '4242' }, now: NOW });

  const attempt = (eventId: string, n: number, outcome: DeliveryAttempt['outcome'], status?: number): DeliveryAttempt => ({
    eventId,
    type: 'token.created',
    attempt: n,
    outcome,
    ...(status === undefined ? {} : { status }),
    latencyMs: 3,
    at: NOW.toISOString(),
  });

  it('reads only events recorded after the group’s start, fans them out to each endpoint in order and acknowledges them', async () => {
    const merchantId = `shop-${Math.random()}`;
    const events = new RedisEventStore(redis.redis);
    const store = new RedisWebhookDeliveryStore(redis.redis);
    await events.record(tokenEvent(merchantId, 'tok_before0'));
    const start = Date.now() + 2;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const a = tokenEvent(merchantId, 'tok_aaaaaaaa');
    const b = tokenEvent(merchantId, 'tok_bbbbbbbb');
    await events.record(a);
    await events.record(b);
    await store.ensureGroup(merchantId, start);
    await store.ensureGroup(merchantId, start);

    const read = await store.readNew(merchantId, 'c1', 10);
    expect(read.map((e) => e.event?.id)).toEqual([a.id, b.id]);
    for (const entry of read) await store.fanOut(merchantId, entry.entryId, entry.event, ['we_1', 'we_2'], NOW);
    // Replayed after a crash: queued once.
    await store.fanOut(merchantId, read[0]!.entryId, read[0]!.event, ['we_1'], NOW);

    const head = await store.queueHead(merchantId, 'we_1', 10);
    expect(head.map((d) => [d.eventId, d.objectKey, d.attempts])).toEqual([
      [a.id, 'tok_aaaaaaaa', 0],
      [b.id, 'tok_bbbbbbbb', 0],
    ]);
    expect(head[0]!.order).toBe(deliveryOrder(read[0]!.entryId));
    expect((await store.queueStats(merchantId, 'we_2')).depth).toBe(2);
    expect(await redis.redis.xpending(eventStreamKey(merchantId), 'webhooks')).toEqual([0, null, null, null]);
    expect(await store.readNew(merchantId, 'c1', 10)).toEqual([]);
  });

  it('lets another consumer claim entries a dead consumer read but never fanned out', async () => {
    const merchantId = `shop-${Math.random()}`;
    const store = new RedisWebhookDeliveryStore(redis.redis);
    await store.ensureGroup(merchantId, 0);
    const event = tokenEvent(merchantId, 'tok_cccccccc');
    await new RedisEventStore(redis.redis).record(event);
    expect((await store.readNew(merchantId, 'dead', 10)).length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await store.pruneConsumers(merchantId, 0)).toBe(0);
    const claimed = await store.claimStale(merchantId, 'alive', 20, 10);
    expect(claimed.map((e) => e.event?.id)).toEqual([event.id]);
    await store.fanOut(merchantId, claimed[0]!.entryId, claimed[0]!.event, [], NOW);
    // Both have nothing pending now: forgotten once idle long enough, not before.
    expect(await store.pruneConsumers(merchantId, 60_000)).toBe(0);
    expect(await store.pruneConsumers(merchantId, 0)).toBe(2);
    expect(await redis.redis.xinfo('CONSUMERS', eventStreamKey(merchantId), 'webhooks')).toEqual([]);
  });

  it('reschedules a failure, removes a success, gives up, logs each attempt newest first and tracks since when the endpoint fails', async () => {
    const merchantId = `shop-${Math.random()}`;
    const store = new RedisWebhookDeliveryStore(redis.redis);
    const a = tokenEvent(merchantId, 'tok_aaaaaaaa');
    const b = tokenEvent(merchantId, 'tok_bbbbbbbb');
    await store.fanOut(merchantId, '1000-0', a, ['we_1'], NOW);
    await store.fanOut(merchantId, '1000-1', b, ['we_1'], NOW);

    const first = await store.recordFailure(merchantId, 'we_1', attempt(a.id, 1, 'failed', 500), 5000, new Date(10_000));
    const second = await store.recordFailure(merchantId, 'we_1', attempt(a.id, 2, 'failed', 500), 9000, new Date(20_000));
    expect([first, second]).toEqual([10_000, 10_000]);
    expect((await store.queueHead(merchantId, 'we_1', 1))[0]).toMatchObject({ eventId: a.id, attempts: 2, nextAttemptAt: 9000 });

    const ids = await store.queueIds(merchantId, 'we_1', 10);
    await store.recordSuccess(merchantId, 'we_1', attempt(a.id, 3, 'succeeded', 200));
    // Read before the success, asked after: the delivered one is left out, not shown as new.
    expect((await store.deliveryStates(merchantId, 'we_1', ids)).map((d) => d.eventId)).toEqual([b.id]);
    expect(await store.recordFailure(merchantId, 'we_1', attempt(b.id, 1, 'gave_up'), undefined, new Date(30_000))).toBe(30_000);
    expect(await store.queueStats(merchantId, 'we_1')).toEqual({ depth: 0, oldestCreatedMs: undefined });
    expect((await store.log(merchantId, 'we_1')).map((l) => [l.eventId, l.attempt, l.outcome])).toEqual([
      [b.id, 1, 'gave_up'],
      [a.id, 3, 'succeeded'],
      [a.id, 2, 'failed'],
      [a.id, 1, 'failed'],
    ]);

    await store.requeue(merchantId, 'we_1', a, NOW);
    expect(await store.queueHead(merchantId, 'we_1', 10)).toEqual([
      expect.objectContaining({ eventId: a.id, attempts: 0, nextAttemptAt: 0, objectKey: 'tok_aaaaaaaa' }),
    ]);
    await store.forgetEndpoint(merchantId, 'we_1');
    expect(await store.queueHead(merchantId, 'we_1', 10)).toEqual([]);
    expect(await store.log(merchantId, 'we_1')).toEqual([]);
  });

  it('keeps a delivery queued when it is resent while its attempt is in flight, and removes it once the resend succeeds', async () => {
    const merchantId = `shop-${Math.random()}`;
    const store = new RedisWebhookDeliveryStore(redis.redis);
    const a = tokenEvent(merchantId, 'tok_aaaaaaaa');
    await store.fanOut(merchantId, '1000-0', a, ['we_1'], NOW);
    const [inFlight] = await store.queueHead(merchantId, 'we_1', 1);
    expect(inFlight?.resends).toBe(0);

    // The receiver already has it; the operator presses Resend before the success is recorded.
    await store.requeue(merchantId, 'we_1', a, NOW);
    await store.recordSuccess(merchantId, 'we_1', attempt(a.id, 1, 'succeeded', 200), inFlight!.resends);
    const [resent] = await store.queueHead(merchantId, 'we_1', 1);
    expect(resent).toMatchObject({ eventId: a.id, nextAttemptAt: 0, resends: 1 });

    await store.recordSuccess(merchantId, 'we_1', attempt(a.id, 2, 'succeeded', 200), resent!.resends);
    expect(await store.queueHead(merchantId, 'we_1', 1)).toEqual([]);
  });

  it('keeps an endpoint’s lease with one holder until it is released or expires', async () => {
    const merchantId = `shop-${Math.random()}`;
    const store = new RedisWebhookDeliveryStore(redis.redis);
    expect(await store.holdLease(merchantId, 'we_1', 'a', 10_000)).toBe(true);
    expect(await store.holdLease(merchantId, 'we_1', 'b', 10_000)).toBe(false);
    expect(await store.holdLease(merchantId, 'we_1', 'a', 10_000)).toBe(true);
    await store.releaseLease(merchantId, 'we_1', 'b');
    expect(await store.holdLease(merchantId, 'we_1', 'b', 10_000)).toBe(false);
    await store.releaseLease(merchantId, 'we_1', 'a');
    expect(await store.holdLease(merchantId, 'we_1', 'b', 50)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await store.holdLease(merchantId, 'we_1', 'a', 10_000)).toBe(true);
  });
});
