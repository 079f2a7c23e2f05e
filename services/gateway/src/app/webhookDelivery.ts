import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Counter, Gauge, type Registry } from 'prom-client';
import { createLogThrottle, type Logger } from '@tessera/common';
import {
  buildEvent,
  signingGenerations,
  webhookSecret,
  type DeliveryAttempt,
  type EventStore,
  type QueuedDelivery,
  type WebhookDeliveryStore,
  type WebhookEndpointRecord,
  type WebhookEndpointStore,
} from '@tessera/merchant-data';
import {
  endpointWants,
  isDelivered,
  nextAttemptAt,
  shouldDisable,
  signatureHeader,
  startableDeliveries,
  webhookBody,
  type RetryPolicy,
} from '../domain/webhookRetry';
import type { WebhookSender } from './ports';

/**
 * Webhook delivery (docs/webhooks.md, "Delivery, retries and ordering"). Each gateway process (each
 * worker) runs one dispatcher. It reads every merchant's event stream in the consumer group
 * `webhooks`, fans each event out to the endpoints that want it (one MULTI with the XACK), and
 * serves the endpoints whose lease it holds: several deliveries in flight per endpoint, one per
 * object, each through the proxy's egress with its own deadline, so a hanging receiver holds back
 * nothing but its own queue. Everything it knows lives in Redis; a process killed at any point
 * leaves each event either pending in the stream (claimed again by a live dispatcher) or queued
 * (sent again once the lease expires): at least once, never lost.
 */

export interface WebhookDeliverySettings {
  retry: RetryPolicy;
  /** WEBHOOK_TIMEOUT_MS: one attempt's deadline at the proxy. */
  timeoutMs: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: deliveries in flight per endpoint (of different objects). */
  endpointConcurrency: number;
  /** WEBHOOK_DISABLE_AFTER_SECONDS in ms: only failures for this long disables the endpoint. */
  disableAfterMs: number;
  /** WEBHOOK_LEASE_MS: an endpoint's lease, and how long a read stream entry may stay unacknowledged before it is claimed. */
  leaseMs: number;
  /** The wait between passes that found nothing to do. */
  pollMs?: number;
  /** How often endpoints are read again (new, deleted, disabled ones). */
  discoveryMs?: number;
}

export interface WebhookDeliveryDeps {
  deliveries: WebhookDeliveryStore;
  endpoints: WebhookEndpointStore;
  events: EventStore;
  sender: WebhookSender;
  /** The API-key pepper the endpoints' signing secrets are derived from. */
  pepper: string;
  settings: WebhookDeliverySettings;
  logger: Logger;
  metrics?: Registry;
  now?: () => Date;
  random?: () => number;
}

export interface WebhookDispatcher {
  start(): void;
  /** Starts nothing more, waits for the attempts in flight (each bounded by its deadline), releases the leases. */
  stop(): Promise<void>;
}

/** Stream entries read per merchant per pass. */
const FAN_OUT_BATCH = 200;
/** Failures that are ours (the proxy unreachable, Redis): not an attempt; the endpoint pauses this long. */
const NOT_SENT_PAUSE_MS = 1000;
const USER_AGENT = 'Tessera-Webhooks/1';
const CLOCK_MARGIN_MS = 2000;
/** A live dispatcher reads every stream many times a second: a consumer this idle is a process that is gone. */
const CONSUMER_IDLE_MS = 10 * 60_000;

/** The proxy's refusals that mean the receiver was tried and did not answer: an attempt that failed. */
const RECEIVER_ERRORS: Record<string, string> = {
  psp_timeout: 'timeout',
  psp_unreachable: 'unreachable',
  psp_destination_forbidden: 'forbidden',
  psp_response_too_large: 'unreachable',
};

interface Metrics {
  outcomes: Counter<'outcome'>;
}

export function createWebhookDispatcher(deps: WebhookDeliveryDeps): WebhookDispatcher {
  return new Dispatcher(deps);
}

class Dispatcher implements WebhookDispatcher {
  readonly holder = `${os.hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  /** `readAt`: when `endpoints` was read; an event recorded later may be for an endpoint made since. */
  private readonly merchants = new Map<string, { endpoints: WebhookEndpointRecord[]; groupFrom: number | undefined; readAt: number }>();
  readonly workers = new Map<string, EndpointWorker>();
  stopping = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private lastDiscovery = 0;
  private lastClaim = 0;
  private lastPrune = 0;
  private readonly metrics: Metrics | undefined;
  readonly now: () => Date;
  readonly random: () => number;
  /** Redis or the proxy down makes every pass and attempt fail: one line now and then says so. */
  readonly logUnavailable = createLogThrottle();

  constructor(readonly deps: WebhookDeliveryDeps) {
    this.now = deps.now ?? (() => new Date());
    this.random = deps.random ?? Math.random;
    if (deps.metrics) this.metrics = registerMetrics(deps.metrics, this);
  }

  get settings(): WebhookDeliverySettings {
    return this.deps.settings;
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let busy = false;
      try {
        const nowMs = this.now().getTime();
        if (nowMs - this.lastDiscovery >= (this.settings.discoveryMs ?? 1000)) {
          await this.discover();
          this.lastDiscovery = nowMs;
        }
        if (nowMs - this.lastPrune >= CONSUMER_IDLE_MS) {
          this.lastPrune = nowMs;
          await this.pruneConsumers();
        }
        const claim = nowMs - this.lastClaim >= this.settings.leaseMs / 2;
        if (claim) this.lastClaim = nowMs;
        // One merchant's failure (its slot's Redis node down) holds back no other merchant.
        const fannedOut = await Promise.all(
          [...this.merchants.keys()].map((m) =>
            this.fanOut(m, claim).catch((err: unknown) => {
              if (this.logUnavailable())
                this.deps.logger.warn({ merchantId: m, err: { message: (err as Error).message } }, 'webhook fan-out failed; retrying');
              return false;
            }),
          ),
        );
        busy = fannedOut.some(Boolean);
        const now = this.now().getTime();
        for (const worker of this.workers.values()) if (now >= worker.wakeAt) void worker.pump();
      } catch (err) {
        if (this.logUnavailable())
          this.deps.logger.warn({ err: { message: (err as Error).message } }, 'webhook dispatcher pass failed; retrying');
        await this.sleep(NOT_SENT_PAUSE_MS);
      }
      if (!busy) await this.sleep(this.settings.pollMs ?? 50);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Each process that ever ran is a consumer of every stream; those gone with nothing pending are forgotten. */
  private async pruneConsumers(): Promise<void> {
    for (const [merchantId, merchant] of this.merchants) {
      if (merchant.groupFrom !== undefined) await this.deps.deliveries.pruneConsumers(merchantId, CONSUMER_IDLE_MS);
    }
  }

  /** Reads the directory of merchants with endpoints and their endpoints; starts and retires workers. */
  private async discover(): Promise<void> {
    const seen = new Set<string>();
    for (const merchantId of await this.deps.endpoints.merchantsWithEndpoints()) {
      for (const endpoint of await this.refreshMerchant(merchantId)) seen.add(`${merchantId}\0${endpoint.id}`);
    }
    for (const [key, worker] of this.workers) {
      if (seen.has(key)) continue;
      this.workers.delete(key);
      await worker.stop();
      await this.deps.deliveries.forgetEndpoint(worker.merchantId, worker.endpoint.id);
    }
  }

  /** Reads one merchant's endpoints (and creates its consumer group once it has one). */
  private async refreshMerchant(merchantId: string): Promise<WebhookEndpointRecord[]> {
    const readAt = this.now().getTime();
    const endpoints = await this.deps.endpoints.listForMerchant(merchantId);
    let groupFrom = this.merchants.get(merchantId)?.groupFrom;
    if (groupFrom === undefined && endpoints.length > 0) {
      // From the first endpoint's creation on: what was recorded before anyone listened is not sent.
      groupFrom = Math.min(...endpoints.map((e) => Date.parse(e.createdAt)));
      await this.deps.deliveries.ensureGroup(merchantId, groupFrom);
    }
    this.merchants.set(merchantId, { endpoints, groupFrom, readAt });
    for (const endpoint of endpoints) {
      const worker = this.workers.get(`${merchantId}\0${endpoint.id}`);
      if (worker) worker.endpoint = endpoint;
      else this.workers.set(`${merchantId}\0${endpoint.id}`, new EndpointWorker(this, merchantId, endpoint));
    }
    return endpoints;
  }

  /** Queues the merchant's new stream entries (and those a dead dispatcher left) for the endpoints that want them. */
  private async fanOut(merchantId: string, claim: boolean): Promise<boolean> {
    const groupFrom = this.merchants.get(merchantId)?.groupFrom;
    if (groupFrom === undefined) return false;
    const { deliveries } = this.deps;
    let entries;
    try {
      entries = [
        ...(claim ? await deliveries.claimStale(merchantId, this.holder, this.settings.leaseMs, FAN_OUT_BATCH) : []),
        ...(await deliveries.readNew(merchantId, this.holder, FAN_OUT_BATCH)),
      ];
    } catch (err) {
      // A Redis that lost its data (no AOF) lost the group too: made again, from the same start.
      if (!String((err as Error).message).startsWith('NOGROUP')) throw err;
      await deliveries.ensureGroup(merchantId, groupFrom);
      return true;
    }
    if (entries.length === 0) return false;
    // An endpoint created after the list was read must not miss the events recorded since (the
    // margin covers the clocks of Redis, which dates stream entries, and of the gateways).
    const newest = Math.max(...entries.map((e) => Number(e.entryId.split('-')[0])));
    if (newest >= (this.merchants.get(merchantId)?.readAt ?? 0) - CLOCK_MARGIN_MS) await this.refreshMerchant(merchantId);
    const merchant = this.merchants.get(merchantId);
    if (merchant === undefined) return false;
    const now = this.now();
    const queuedFor = new Set<string>();
    await Promise.all(
      entries.map(({ entryId, event }) => {
        const entryMs = Number(entryId.split('-')[0]);
        const targets = event === undefined ? [] : merchant.endpoints.filter((e) => endpointWants(e, event, entryMs)).map((e) => e.id);
        for (const id of targets) queuedFor.add(id);
        return deliveries.fanOut(merchantId, entryId, event, targets, now);
      }),
    );
    for (const id of queuedFor) {
      const worker = this.workers.get(`${merchantId}\0${id}`);
      if (worker) worker.wakeAt = 0;
    }
    return true;
  }

  /** One attempt of one delivery; never throws. */
  async attempt(worker: EndpointWorker, delivery: QueuedDelivery): Promise<void> {
    const { merchantId, endpoint } = worker;
    const { deliveries, events, sender, logger } = this.deps;
    const started = this.now();
    const record: DeliveryAttempt = {
      eventId: delivery.eventId,
      type: delivery.type,
      attempt: delivery.attempts + 1,
      outcome: 'failed',
      latencyMs: 0,
      at: started.toISOString(),
    };
    try {
      const event = await events.get(merchantId, endpoint.mode, delivery.eventId);
      if (event === undefined) {
        // Past the event retention: nothing left to send.
        await deliveries.recordFailure(
          merchantId,
          endpoint.id,
          { ...record, outcome: 'gave_up', error: 'event_expired' },
          undefined,
          started,
        );
        worker.settled(delivery.eventId, undefined);
        this.metrics?.outcomes.inc({ outcome: 'gave_up' });
        return;
      }
      const body = webhookBody(event);
      const secrets = signingGenerations(endpoint.secrets, started).map((s) =>
        webhookSecret(this.deps.pepper, merchantId, endpoint.mode, endpoint.id, s.generation),
      );
      try {
        const answer = await sender.deliverWebhook(
          {
            merchantId,
            mode: endpoint.mode,
            url: endpoint.url,
            headers: [
              { name: 'tessera-signature', value: signatureHeader(secrets, body, started) },
              { name: 'user-agent', value: USER_AGENT },
            ],
            body: Buffer.from(body),
            timeoutMs: this.settings.timeoutMs,
          },
          { requestId: `whd_${delivery.eventId}` },
        );
        record.status = answer.status;
        record.latencyMs = Math.round(answer.latencyMs);
      } catch (err) {
        const error = RECEIVER_ERRORS[(err as { code?: string }).code ?? ''];
        if (error === undefined) throw err;
        record.error = error;
        record.latencyMs = this.now().getTime() - started.getTime();
      }
      if (record.status !== undefined && isDelivered(record.status)) {
        await deliveries.recordSuccess(merchantId, endpoint.id, { ...record, outcome: 'succeeded' }, delivery.resends);
        worker.settled(delivery.eventId, undefined);
        this.metrics?.outcomes.inc({ outcome: 'succeeded' });
        return;
      }
      const nowMs = this.now().getTime();
      const next = nextAttemptAt(delivery.queuedAt, record.attempt, nowMs, this.settings.retry, this.random());
      const outcome = next === undefined ? 'gave_up' : 'failed';
      const failingSince = await deliveries.recordFailure(
        merchantId,
        endpoint.id,
        { ...record, outcome, ...(next === undefined ? {} : { nextAttemptAt: new Date(next).toISOString() }) },
        next,
        this.now(),
      );
      worker.settled(delivery.eventId, next === undefined ? undefined : { ...delivery, attempts: record.attempt, nextAttemptAt: next });
      this.metrics?.outcomes.inc({ outcome });
      if (shouldDisable(failingSince, nowMs, this.settings.disableAfterMs)) await this.disable(worker, failingSince);
    } catch (err) {
      // Ours, not the receiver's (the proxy or Redis unavailable): no attempt counted, it stays queued.
      this.metrics?.outcomes.inc({ outcome: 'not_sent' });
      worker.pausedUntil = this.now().getTime() + NOT_SENT_PAUSE_MS;
      if (this.logUnavailable()) {
        logger.warn(
          { merchantId, endpointId: endpoint.id, eventId: delivery.eventId, code: (err as { code?: string }).code },
          'webhook not sent; retrying',
        );
      }
    }
  }

  /** Stops delivering to an endpoint that only failed for WEBHOOK_DISABLE_AFTER_SECONDS, and tells the merchant's other endpoints. */
  private async disable(worker: EndpointWorker, failingSinceMs: number): Promise<void> {
    const { merchantId, endpoint } = worker;
    const current = await this.deps.endpoints.get(merchantId, endpoint.mode, endpoint.id);
    if (current === undefined || current.status !== 'enabled') return;
    const failingSince = new Date(failingSinceMs);
    const updated = await this.deps.endpoints.setStatus(
      merchantId,
      endpoint.mode,
      endpoint.id,
      'disabled',
      `failing_since:${failingSince.toISOString()}`,
    );
    if (updated === undefined) return;
    worker.endpoint = updated;
    const merchant = this.merchants.get(merchantId);
    if (merchant) merchant.endpoints = merchant.endpoints.map((e) => (e.id === updated.id ? updated : e));
    await this.deps.events.record(
      buildEvent({
        type: 'webhook_endpoint.disabled',
        merchantId,
        mode: endpoint.mode,
        object: { id: endpoint.id, status: 'disabled', failingSince: Math.floor(failingSinceMs / 1000) },
        now: this.now(),
      }),
    );
    this.deps.logger.warn({ merchantId, endpointId: endpoint.id, failingSince: failingSince.toISOString() }, 'webhook endpoint disabled');
  }
}

/** One endpoint as this dispatcher serves it, while it holds the endpoint's lease. */
class EndpointWorker {
  /** Event id → object key of the attempts in flight. */
  private readonly inFlight = new Map<string, string>();
  private readonly attempts = new Set<Promise<void>>();
  /** Attempts that ended while the queue head was being read: that read may still list them. */
  private readonly endedDuringRead = new Set<string>();
  /** Queued deliveries' states as last read or changed here. */
  private readonly known = new Map<string, QueuedDelivery>();
  private knownSince = 0;
  private reading = false;
  private leased = false;
  private leaseCheckedAt = 0;
  private pumping = false;
  private again = false;
  pausedUntil = 0;
  /**
   * When the dispatcher's loop pumps this endpoint next (0: at its next pass): after new events were
   * queued for it, when the earliest retry is due, and at least every second or third of the lease
   * (to renew it, and to see a resend another process queued). An attempt that ends pumps at once.
   */
  wakeAt = 0;

  constructor(
    private readonly dispatcher: Dispatcher,
    readonly merchantId: string,
    public endpoint: WebhookEndpointRecord,
  ) {}

  /** Starts what may start now; a call while one runs makes that one look again when it is done. */
  async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        await this.pumpOnce();
      } while (this.again && !this.dispatcher.stopping);
    } catch (err) {
      if (this.dispatcher.logUnavailable())
        this.dispatcher.deps.logger.warn(
          { merchantId: this.merchantId, endpointId: this.endpoint.id, err: { message: (err as Error).message } },
          'webhook queue unavailable; retrying',
        );
      this.pausedUntil = Date.now() + NOT_SENT_PAUSE_MS;
    } finally {
      this.pumping = false;
    }
  }

  private async pumpOnce(): Promise<void> {
    const { dispatcher } = this;
    const { deliveries } = dispatcher.deps;
    const { endpointConcurrency, leaseMs } = dispatcher.settings;
    const nowMs = dispatcher.now().getTime();
    const recheck = nowMs + Math.min(leaseMs / 3, dispatcher.settings.discoveryMs ?? 1000);
    this.wakeAt = recheck;
    if (dispatcher.stopping || this.endpoint.status !== 'enabled') return;
    if (nowMs < this.pausedUntil) {
      this.wakeAt = this.pausedUntil;
      return;
    }
    // Renewed also while every slot is busy: a long attempt must not lose the endpoint to another replica.
    if (nowMs - this.leaseCheckedAt >= leaseMs / 3) {
      this.leased = await deliveries.holdLease(this.merchantId, this.endpoint.id, dispatcher.holder, leaseMs);
      this.leaseCheckedAt = nowMs;
    }
    const free = endpointConcurrency - this.inFlight.size;
    if (!this.leased || free <= 0) return;
    // The states of what was read before are kept (this process alone changes them while it holds
    // the lease) and dropped every second, so a resend queued elsewhere is seen.
    if (nowMs - this.knownSince >= (dispatcher.settings.discoveryMs ?? 1000)) {
      this.known.clear();
      this.knownSince = nowMs;
    }
    this.reading = true;
    let head: QueuedDelivery[];
    try {
      const ids = await deliveries.queueIds(this.merchantId, this.endpoint.id, Math.max(64, endpointConcurrency * 4));
      const missing = ids.filter((d) => !this.known.has(d.eventId));
      for (const d of await deliveries.deliveryStates(this.merchantId, this.endpoint.id, missing)) this.known.set(d.eventId, d);
      head = ids.map((d) => this.known.get(d.eventId)).filter((d): d is QueuedDelivery => d !== undefined);
    } finally {
      this.reading = false;
    }
    // What is in flight, or ended while the head was read (the read may show it before its outcome),
    // is not started again, and holds back the later events of its object: the next pass knows more.
    const settling = (d: QueuedDelivery) => this.inFlight.has(d.eventId) || this.endedDuringRead.has(d.eventId);
    const blocked = new Set([...this.inFlight.values(), ...head.filter(settling).map((d) => d.objectKey)]);
    const waiting = head.filter((d) => !settling(d));
    this.endedDuringRead.clear();
    const startable = startableDeliveries(waiting, blocked, nowMs);
    for (const delivery of startable.slice(0, free)) this.begin(delivery);
    const started = new Set(startable.slice(0, free).map((d) => d.eventId));
    const nextDue = Math.min(...waiting.filter((d) => !started.has(d.eventId) && d.nextAttemptAt > nowMs).map((d) => d.nextAttemptAt));
    this.wakeAt = Math.min(recheck, nextDue);
  }

  /** After an attempt: its new state, or undefined when it left the queue. */
  settled(eventId: string, next: QueuedDelivery | undefined): void {
    if (next === undefined) this.known.delete(eventId);
    else this.known.set(eventId, next);
  }

  private begin(delivery: QueuedDelivery): void {
    this.inFlight.set(delivery.eventId, delivery.objectKey);
    const attempt = this.dispatcher.attempt(this, delivery).finally(() => {
      if (this.reading) this.endedDuringRead.add(delivery.eventId);
      this.inFlight.delete(delivery.eventId);
      this.attempts.delete(attempt);
      if (!this.dispatcher.stopping) void this.pump();
    });
    this.attempts.add(attempt);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.attempts]);
    if (!this.leased) return;
    this.leased = false;
    await this.dispatcher.deps.deliveries.releaseLease(this.merchantId, this.endpoint.id, this.dispatcher.holder).catch(() => undefined);
  }
}

/**
 * tessera_webhook_deliveries_total{outcome}: succeeded, failed (retried later), gave_up, not_sent
 * (ours: the proxy or Redis unavailable). The two gauges are read from Redis at each scrape, over
 * the endpoints this process knows (every one, after its first pass). No merchant, URL or id in labels.
 */
function registerMetrics(registry: Registry, dispatcher: Dispatcher): Metrics {
  const stats = async () => {
    const now = dispatcher.now().getTime();
    let depth = 0;
    let oldest: number | undefined;
    const all = await Promise.all(
      [...dispatcher.workers.values()].map((w) =>
        dispatcher.deps.deliveries.queueStats(w.merchantId, w.endpoint.id).catch(() => undefined),
      ),
    );
    for (const s of all) {
      if (s === undefined) continue;
      depth += s.depth;
      if (s.oldestCreatedMs !== undefined) oldest = Math.min(oldest ?? s.oldestCreatedMs, s.oldestCreatedMs);
    }
    return { depth, oldestSeconds: oldest === undefined ? 0 : Math.max(0, (now - oldest) / 1000) };
  };
  new Gauge({
    name: 'tessera_webhook_queue_depth',
    help: 'Webhook deliveries queued (waiting, in backoff or in flight), over every endpoint',
    registers: [registry],
    async collect() {
      this.set((await stats()).depth);
    },
  });
  new Gauge({
    name: 'tessera_webhook_oldest_undelivered_seconds',
    help: 'Age of the oldest event still queued for an endpoint (0: none)',
    registers: [registry],
    async collect() {
      this.set((await stats()).oldestSeconds);
    },
  });
  return {
    outcomes: new Counter({
      name: 'tessera_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: succeeded, failed (retried later), gave_up (retry window over), not_sent (proxy or Redis unavailable)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
