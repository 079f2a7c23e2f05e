/**
 * Webhook delivery end to end (issue 27): events recorded in Redis (RedisEventStore, as the services
 * record them) travel through the gateway's dispatcher and the proxy's DeliverWebhook to a receiver
 * on loopback that answers 200. Two figures, each with its target:
 *   throughput - BENCH_WEBHOOK_EVENTS (20000) events recorded as fast as Redis takes them, over
 *                as many objects, one endpoint: events delivered per second, from the first
 *                recorded to the last received (target >= 1000/s);
 *   lag        - events recorded at an even pace of half that rate for BENCH_WEBHOOK_LAG_S (5) s:
 *                p50/p99 from recording to the receiver's arrival.
 * Nothing is asserted: a shared 2-core machine cannot promise a rate.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { buildEvent, newWebhookEndpointId, RedisEventStore, RedisWebhookEndpointStore } from '@tessera/merchant-data';

export const WEBHOOK_THROUGHPUT_TARGET = 1000;

/** A receiver on `port` that answers 200 and notes when each event id first arrived. */
export function startWebhookReceiver(port) {
  const arrivals = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const { id } = JSON.parse(Buffer.concat(chunks).toString());
        if (!arrivals.has(id)) arrivals.set(id, at);
      } catch {
        // Counted as not arrived.
      }
      res.writeHead(200).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve({ arrivals, close: () => new Promise((r) => server.close(() => r())) })),
  );
}

const quantile = (sorted, q) => (sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

async function waitForArrivals(arrivals, ids, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (ids.every((id) => arrivals.has(id))) return true;
    await sleep(20);
  }
  return false;
}

/**
 * Runs both phases against a running stack whose proxy may reach `receiverPort` on 127.0.0.1.
 * `log` prints progress lines.
 */
export async function webhookPhase({ redisUrl, receiverPort, log, events = 20_000, lagSeconds = 5 }) {
  const redis = new Redis(redisUrl);
  const receiver = await startWebhookReceiver(receiverPort);
  try {
    const store = new RedisEventStore(redis);
    const merchantId = `bench-webhooks-${Date.now()}`;
    const endpoints = new RedisWebhookEndpointStore(redis);
    await endpoints.create({
      id: newWebhookEndpointId(),
      merchantId,
      mode: 'test',
      url: `http://127.0.0.1:${receiverPort}/events`,
      enabledEvents: ['*'],
      status: 'enabled',
      createdAt: new Date().toISOString(),
      secrets: [{ generation: 1, expiresAt: null }],
    });
    const record = async (i) => {
      const event = buildEvent({ type: 'token.updated', merchantId, mode: 'test', object: { id: `tok_bench${i}x`, last4: '4242' } });
      const at = Date.now();
      await store.record(event);
      return { id: event.id, at };
    };
    // The dispatcher discovers the endpoint (about a second); a first event shows it is serving.
    const first = await record(-1);
    if (!(await waitForArrivals(receiver.arrivals, [first.id], 30_000))) throw new Error('webhooks: the first event never arrived');

    log(`webhooks: ${events} events as fast as they are recorded, one endpoint`);
    const recorded = [];
    const started = Date.now();
    const inFlight = 64;
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < events) recorded.push(await record(next++));
      }),
    );
    const recordedS = (Date.now() - started) / 1000;
    const ids = recorded.map((r) => r.id);
    const complete = await waitForArrivals(receiver.arrivals, ids, 300_000);
    const last = Math.max(...ids.map((id) => receiver.arrivals.get(id) ?? 0));
    const throughput = {
      events,
      delivered: ids.filter((id) => receiver.arrivals.has(id)).length,
      complete,
      recordRate: events / recordedS,
      eventsPerSecond: ids.filter((id) => receiver.arrivals.has(id)).length / ((last - started) / 1000),
    };
    log(`webhooks: ${throughput.eventsPerSecond.toFixed(0)} events/s delivered (recorded at ${throughput.recordRate.toFixed(0)}/s)`);

    const rate = Math.max(1, Math.floor(Math.min(throughput.eventsPerSecond, throughput.recordRate) / 2));
    log(`webhooks: lag at ${rate} events/s for ${lagSeconds}s`);
    const paced = [];
    const pacedStart = Date.now();
    const total = rate * lagSeconds;
    const pending = [];
    for (let i = 0; i < total; i++) {
      const due = pacedStart + (i * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      pending.push(record(events + i).then((r) => paced.push(r)));
    }
    await Promise.all(pending);
    const lagComplete = await waitForArrivals(
      receiver.arrivals,
      paced.map((r) => r.id),
      120_000,
    );
    const lags = paced
      .filter((r) => receiver.arrivals.has(r.id))
      .map((r) => receiver.arrivals.get(r.id) - r.at)
      .sort((a, b) => a - b);
    const lag = {
      rate,
      seconds: lagSeconds,
      events: total,
      complete: lagComplete,
      p50Ms: quantile(lags, 0.5),
      p99Ms: quantile(lags, 0.99),
    };
    log(`webhooks: lag p50 ${lag.p50Ms} ms, p99 ${lag.p99Ms} ms`);
    return { throughput, lag };
  } finally {
    redis.disconnect();
    await receiver.close();
  }
}

/** The report's lines. */
export function webhookLines({ throughput, lag }) {
  const f = (n, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
  const ok = throughput.eventsPerSecond >= WEBHOOK_THROUGHPUT_TARGET;
  return [
    '| webhooks, end to end (record -> dispatcher -> proxy -> receiver) | measured | goal |',
    '|---|---:|---|',
    `| events/s delivered, ${throughput.events} events, one endpoint | ${f(throughput.eventsPerSecond)} | >= ${WEBHOOK_THROUGHPUT_TARGET} ${ok ? 'ok' : `MISSED by ${f(WEBHOOK_THROUGHPUT_TARGET - throughput.eventsPerSecond)}`} |`,
    `| delivery lag p50 ms at ${lag.rate} events/s (half) | ${f(lag.p50Ms)} | (info) |`,
    `| delivery lag p99 ms at ${lag.rate} events/s (half) | ${f(lag.p99Ms)} | (info) |`,
    throughput.complete && lag.complete ? '' : 'WEBHOOKS: some events were not delivered within the wait.',
    '',
  ];
}
