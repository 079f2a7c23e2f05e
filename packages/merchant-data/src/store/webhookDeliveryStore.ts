import type { Redis } from 'ioredis';
import type { EventRecord } from '../domain/events';
import { RedisWebhookEndpointStore } from './webhookEndpointStore';

/** The consumer group of the delivery dispatchers on each merchant's event stream. */
export const WEBHOOK_CONSUMER_GROUP = 'webhooks';
/** Attempts kept per endpoint for the dashboard and the CLI. */
export const WEBHOOK_DELIVERY_LOG_LENGTH = 100;

/** One entry of a merchant's event stream as the dispatcher reads it. */
export interface StreamEvent {
  /** The stream id (`<ms>-<seq>`), which orders the merchant's events. */
  entryId: string;
  /** Undefined when the entry holds no readable event: acknowledged without delivery. */
  event: EventRecord | undefined;
}

/** A place in an endpoint's queue. */
export interface QueuedId {
  eventId: string;
  order: number;
}

/** An event waiting in an endpoint's queue. */
export interface QueuedDelivery {
  eventId: string;
  /** Order of creation (see deliveryOrder); the queue is sorted by it. */
  order: number;
  /** `data.object.id`, or the event id for events without an object id: at most one in flight per key. */
  objectKey: string;
  type: string;
  /** Attempts made so far. */
  attempts: number;
  /** Unix ms before which the next attempt must not start (0: now). */
  nextAttemptAt: number;
  /** Unix ms when it was queued: the retry window counts from here. */
  queuedAt: number;
  /** How often it was resent; a success removes it only if no resend came after its state was read. */
  resends: number;
}

export type DeliveryOutcome = 'succeeded' | 'failed' | 'gave_up';

/** One attempt as the delivery log shows it; never a URL, header, secret or response body. */
export interface DeliveryAttempt {
  eventId: string;
  type: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** `failed`: another attempt is scheduled; `gave_up`: the retry window is over, the delivery failed. */
  outcome: DeliveryOutcome;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why there was no answer: `unreachable`, `timeout`, `forbidden` (the egress policy refused the address). */
  error?: string;
  latencyMs: number;
  /** ISO time of the attempt. */
  at: string;
  /** ISO time of the next attempt, when outcome is `failed`. */
  nextAttemptAt?: string;
}

export interface EndpointQueueStats {
  depth: number;
  /** Unix ms of the oldest queued event's creation; undefined when the queue is empty. */
  oldestCreatedMs: number | undefined;
}

/**
 * The durable side of webhook delivery (docs/webhooks.md, "Delivery, retries and ordering"):
 * a consumer group on each merchant's event stream, a queue per endpoint with each delivery's
 * state, a lease per endpoint, the endpoint's failing-since time and a log of its last attempts.
 * Read by the gateway's dispatcher and by the admin dashboard (log, resend).
 */
export interface WebhookDeliveryStore {
  /**
   * Creates the consumer group if missing, starting after `fromMs` (the merchant's first endpoint's
   * creation): events recorded before any endpoint existed are not delivered.
   */
  ensureGroup(merchantId: string, fromMs: number): Promise<void>;
  /** New entries for `consumer` (XREADGROUP `>`), at most `count`. */
  readNew(merchantId: string, consumer: string, count: number): Promise<StreamEvent[]>;
  /** Entries another consumer read but did not fan out for `minIdleMs` (it died): claimed by `consumer`. */
  claimStale(merchantId: string, consumer: string, minIdleMs: number, count: number): Promise<StreamEvent[]>;
  /**
   * Forgets consumers (one per dispatcher process that ever ran) idle for `minIdleMs` with nothing
   * pending, so restarts do not pile them up. Answers how many went.
   */
  pruneConsumers(merchantId: string, minIdleMs: number): Promise<number>;
  /**
   * Queues `event` for each endpoint and acknowledges the stream entry, in one MULTI: after a crash
   * the entry is either still pending (and fanned out again) or queued everywhere. Queuing twice
   * is harmless (ZADD NX, state fields set only when absent).
   */
  fanOut(merchantId: string, entryId: string, event: EventRecord | undefined, endpointIds: readonly string[], now: Date): Promise<void>;
  /** The first `count` queued deliveries in order of creation. */
  queueHead(merchantId: string, endpointId: string, count: number): Promise<QueuedDelivery[]>;
  /** queueHead in two steps, for a caller that keeps the states it read: the ids in order, then the states of some. */
  queueIds(merchantId: string, endpointId: string, count: number): Promise<QueuedId[]>;
  /** The states of `ids` still queued (a delivery that left the queue meanwhile is left out). */
  deliveryStates(merchantId: string, endpointId: string, ids: readonly QueuedId[]): Promise<QueuedDelivery[]>;
  /**
   * A 2xx: removes the delivery, logs the attempt, and the endpoint is no longer failing. Given the
   * `resends` its state had when the attempt began, a resend queued during the attempt keeps it queued.
   */
  recordSuccess(merchantId: string, endpointId: string, attempt: DeliveryAttempt, resendsSeen?: number): Promise<void>;
  /**
   * A failed attempt: `nextAttemptAt` reschedules it, undefined gives up (removes it; the log says
   * `gave_up`). Answers since when the endpoint has had only failures (unix ms).
   */
  recordFailure(
    merchantId: string,
    endpointId: string,
    attempt: DeliveryAttempt,
    nextAttemptAt: number | undefined,
    now: Date,
  ): Promise<number>;
  /** Takes or renews the endpoint's lease for `holder`; false while another holder has it. */
  holdLease(merchantId: string, endpointId: string, holder: string, ttlMs: number): Promise<boolean>;
  releaseLease(merchantId: string, endpointId: string, holder: string): Promise<void>;
  /** Queues an event again (a resend), due now, also if it was delivered before. */
  requeue(merchantId: string, endpointId: string, event: EventRecord, now: Date): Promise<void>;
  /** Newest first, at most WEBHOOK_DELIVERY_LOG_LENGTH. */
  log(merchantId: string, endpointId: string, limit?: number): Promise<DeliveryAttempt[]>;
  queueStats(merchantId: string, endpointId: string): Promise<EndpointQueueStats>;
  /** Drops the endpoint's queue, states, log, failing-since and lease (the endpoint was deleted). */
  forgetEndpoint(merchantId: string, endpointId: string): Promise<void>;
}

/** The merchant's event stream (RedisEventStore appends to it). */
export function eventStreamKey(merchantId: string): string {
  return `tessera:events:{m:${merchantId}}:stream`;
}

/**
 * A stream id as a queue score: ms * 1000 + sequence, so events keep the order the stream gave
 * them (exact below 1000 events in one millisecond; beyond that, ties are broken by event id).
 */
export function deliveryOrder(entryId: string): number {
  const [ms, seq] = entryId.split('-');
  return Number(ms) * 1000 + Math.min(Number(seq ?? 0), 999);
}

/** What may be delivered without waiting for another event of the same object. */
export function objectKeyOf(event: EventRecord): string {
  const id = event.data.object.id;
  return typeof id === 'string' && id !== '' ? id : event.id;
}

const LEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0`;
const PRUNE_CONSUMER_SCRIPT = `for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local name, pending
  for i = 1, #c, 2 do
    if c[i] == 'name' then name = c[i + 1] elseif c[i] == 'pending' then pending = c[i + 1] end
  end
  if name == ARGV[2] then
    if pending == 0 then redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2]) return 1 end
    return 0
  end
end
return 0`;
const REMOVE_UNLESS_RESENT_SCRIPT = `if tonumber(redis.call('HGET', KEYS[2], 'resends') or '0') == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
end
return 0`;
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Key layout, all in the merchant's slot `{m:<id>}` so a fan-out and its XACK are one MULTI on a
 * Redis Cluster (the `tessera:webhooks:*` and `tessera:events:*` ACL patterns cover them):
 * - `tessera:events:{m:<id>}:stream`, group `webhooks`;
 * - `tessera:webhooks:{m:<id>}:queue:<we>`: ZSET of event ids scored by deliveryOrder;
 * - `tessera:webhooks:{m:<id>}:delivery:<we>:<evt>`: HASH obj, type, queuedAt, attempts, nextAt;
 * - `tessera:webhooks:{m:<id>}:lease:<we>`: the dispatcher serving the endpoint (SET NX PX);
 * - `tessera:webhooks:{m:<id>}:failing:<we>`: unix ms of the first failure since the last success;
 * - `tessera:webhooks:{m:<id>}:log:<we>`: LIST of the last attempts as JSON, newest first.
 */
export class RedisWebhookDeliveryStore implements WebhookDeliveryStore {
  constructor(private readonly redis: Redis) {}

  private key(merchantId: string, kind: string, endpointId: string): string {
    return `${RedisWebhookEndpointStore.base(merchantId)}${kind}:${endpointId}`;
  }

  private stateKey(merchantId: string, endpointId: string, eventId: string): string {
    return `${this.key(merchantId, 'delivery', endpointId)}:${eventId}`;
  }

  async ensureGroup(merchantId: string, fromMs: number): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', eventStreamKey(merchantId), WEBHOOK_CONSUMER_GROUP, `${Math.max(0, fromMs - 1)}-0`, 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).startsWith('BUSYGROUP')) throw err;
    }
  }

  async readNew(merchantId: string, consumer: string, count: number): Promise<StreamEvent[]> {
    const reply = (await this.redis.xreadgroup(
      'GROUP',
      WEBHOOK_CONSUMER_GROUP,
      consumer,
      'COUNT',
      count,
      'STREAMS',
      eventStreamKey(merchantId),
      '>',
    )) as [string, [string, string[]][]][] | null;
    return (reply?.[0]?.[1] ?? []).map(streamEvent);
  }

  async claimStale(merchantId: string, consumer: string, minIdleMs: number, count: number): Promise<StreamEvent[]> {
    const reply = (await this.redis.xautoclaim(
      eventStreamKey(merchantId),
      WEBHOOK_CONSUMER_GROUP,
      consumer,
      minIdleMs,
      '0-0',
      'COUNT',
      count,
    )) as [string, ([string, string[]] | null)[]];
    // Entries trimmed from the stream come back as null: nothing left to deliver.
    return reply[1].filter((entry): entry is [string, string[]] => entry !== null).map(streamEvent);
  }

  async pruneConsumers(merchantId: string, minIdleMs: number): Promise<number> {
    const consumers = (await this.redis.xinfo('CONSUMERS', eventStreamKey(merchantId), WEBHOOK_CONSUMER_GROUP)) as unknown[][];
    let pruned = 0;
    for (const fields of consumers) {
      const info = new Map<string, unknown>();
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(String(fields[i]), fields[i + 1]);
      if (Number(info.get('pending')) !== 0 || Number(info.get('idle')) < minIdleMs) continue;
      // Checked again inside Redis: DELCONSUMER drops whatever the consumer has pending.
      const deleted = (await this.redis.eval(
        PRUNE_CONSUMER_SCRIPT,
        1,
        eventStreamKey(merchantId),
        WEBHOOK_CONSUMER_GROUP,
        String(info.get('name')),
      )) as number;
      if (deleted === 1) pruned += 1;
    }
    return pruned;
  }

  async fanOut(
    merchantId: string,
    entryId: string,
    event: EventRecord | undefined,
    endpointIds: readonly string[],
    now: Date,
  ): Promise<void> {
    const tx = this.redis.multi();
    if (event !== undefined) {
      for (const endpointId of endpointIds) {
        const state = this.stateKey(merchantId, endpointId, event.id);
        tx.zadd(this.key(merchantId, 'queue', endpointId), 'NX', deliveryOrder(entryId), event.id)
          .hsetnx(state, 'obj', objectKeyOf(event))
          .hsetnx(state, 'type', event.type)
          .hsetnx(state, 'queuedAt', now.getTime());
      }
    }
    tx.xack(eventStreamKey(merchantId), WEBHOOK_CONSUMER_GROUP, entryId);
    await execOrThrow(tx, 'webhook fan-out');
  }

  async queueHead(merchantId: string, endpointId: string, count: number): Promise<QueuedDelivery[]> {
    return this.deliveryStates(merchantId, endpointId, await this.queueIds(merchantId, endpointId, count));
  }

  async queueIds(merchantId: string, endpointId: string, count: number): Promise<QueuedId[]> {
    const flat = await this.redis.zrange(this.key(merchantId, 'queue', endpointId), 0, count - 1, 'WITHSCORES');
    const ids: QueuedId[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) ids.push({ eventId: flat[i] as string, order: Number(flat[i + 1]) });
    return ids;
  }

  async deliveryStates(merchantId: string, endpointId: string, ids: readonly QueuedId[]): Promise<QueuedDelivery[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const { eventId } of ids) pipeline.hgetall(this.stateKey(merchantId, endpointId, eventId));
    const states = (await pipeline.exec()) ?? [];
    const found: QueuedDelivery[] = [];
    ids.forEach(({ eventId, order }, i) => {
      const state = (states[i]?.[1] ?? {}) as Record<string, string>;
      // Gone since the queue was read (delivered or given up meanwhile).
      if (state.obj === undefined) return;
      found.push({
        eventId,
        order,
        objectKey: state.obj,
        type: state.type ?? '',
        attempts: Number(state.attempts ?? 0),
        nextAttemptAt: Number(state.nextAt ?? 0),
        queuedAt: Number(state.queuedAt ?? Math.floor(order / 1000)),
        resends: Number(state.resends ?? 0),
      });
    });
    return found;
  }

  async recordSuccess(merchantId: string, endpointId: string, attempt: DeliveryAttempt, resendsSeen?: number): Promise<void> {
    const queue = this.key(merchantId, 'queue', endpointId);
    const state = this.stateKey(merchantId, endpointId, attempt.eventId);
    const tx = this.redis.multi();
    // A resend can land while the attempt it would repeat is in flight (ZADD NX finds the entry still
    // queued): removing the entry then would drop the resend, so it stays, due now.
    if (resendsSeen === undefined) tx.zrem(queue, attempt.eventId).del(state);
    else tx.eval(REMOVE_UNLESS_RESENT_SCRIPT, 2, queue, state, attempt.eventId, resendsSeen);
    tx.del(this.key(merchantId, 'failing', endpointId));
    this.appendLog(tx, merchantId, endpointId, attempt);
    await execOrThrow(tx, 'webhook delivery success');
  }

  async recordFailure(
    merchantId: string,
    endpointId: string,
    attempt: DeliveryAttempt,
    nextAttemptAt: number | undefined,
    now: Date,
  ): Promise<number> {
    const failing = this.key(merchantId, 'failing', endpointId);
    const state = this.stateKey(merchantId, endpointId, attempt.eventId);
    const tx = this.redis.multi();
    if (nextAttemptAt === undefined) tx.zrem(this.key(merchantId, 'queue', endpointId), attempt.eventId).del(state);
    // Only while it is still queued: a success of a concurrent resend must not be brought back.
    else
      tx.eval(
        `if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'attempts', ARGV[1], 'nextAt', ARGV[2]) end return 0`,
        1,
        state,
        attempt.attempt,
        nextAttemptAt,
      );
    tx.setnx(failing, now.getTime()).get(failing);
    this.appendLog(tx, merchantId, endpointId, attempt);
    const results = await execOrThrow(tx, 'webhook delivery failure');
    const since = results[nextAttemptAt === undefined ? 3 : 2]?.[1];
    return Number(since ?? now.getTime());
  }

  async holdLease(merchantId: string, endpointId: string, holder: string, ttlMs: number): Promise<boolean> {
    return ((await this.redis.eval(LEASE_SCRIPT, 1, this.key(merchantId, 'lease', endpointId), holder, ttlMs)) as number) === 1;
  }

  async releaseLease(merchantId: string, endpointId: string, holder: string): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.key(merchantId, 'lease', endpointId), holder);
  }

  async requeue(merchantId: string, endpointId: string, event: EventRecord, now: Date): Promise<void> {
    const state = this.stateKey(merchantId, endpointId, event.id);
    // Its original place among the object's events (creation order), due now.
    await execOrThrow(
      this.redis
        .multi()
        .zadd(this.key(merchantId, 'queue', endpointId), 'NX', event.created * 1_000_000, event.id)
        .hset(state, 'obj', objectKeyOf(event), 'type', event.type, 'queuedAt', now.getTime(), 'nextAt', 0)
        .hincrby(state, 'resends', 1),
      'webhook resend',
    );
  }

  async log(merchantId: string, endpointId: string, limit = WEBHOOK_DELIVERY_LOG_LENGTH): Promise<DeliveryAttempt[]> {
    const entries = await this.redis.lrange(this.key(merchantId, 'log', endpointId), 0, Math.min(limit, WEBHOOK_DELIVERY_LOG_LENGTH) - 1);
    return entries.map((json) => JSON.parse(json) as DeliveryAttempt);
  }

  async queueStats(merchantId: string, endpointId: string): Promise<EndpointQueueStats> {
    const queue = this.key(merchantId, 'queue', endpointId);
    const results = await this.redis.multi().zcard(queue).zrange(queue, 0, 0, 'WITHSCORES').exec();
    const depth = Number(results?.[0]?.[1] ?? 0);
    const head = (results?.[1]?.[1] ?? []) as string[];
    return { depth, oldestCreatedMs: head[1] === undefined ? undefined : Math.floor(Number(head[1]) / 1000) };
  }

  async forgetEndpoint(merchantId: string, endpointId: string): Promise<void> {
    const queue = this.key(merchantId, 'queue', endpointId);
    const ids = await this.redis.zrange(queue, 0, -1);
    const tx = this.redis.multi();
    for (const id of ids) tx.del(this.stateKey(merchantId, endpointId, id));
    tx.del(queue, ...['failing', 'log', 'lease'].map((kind) => this.key(merchantId, kind, endpointId)));
    await execOrThrow(tx, 'webhook endpoint cleanup');
  }

  private appendLog(tx: ReturnType<Redis['multi']>, merchantId: string, endpointId: string, attempt: DeliveryAttempt): void {
    const log = this.key(merchantId, 'log', endpointId);
    tx.lpush(log, JSON.stringify(attempt)).ltrim(log, 0, WEBHOOK_DELIVERY_LOG_LENGTH - 1);
  }
}

function streamEvent([entryId, fields]: [string, string[]]): StreamEvent {
  const at = fields.indexOf('event');
  const json = at >= 0 && at % 2 === 0 ? fields[at + 1] : undefined;
  let event: EventRecord | undefined;
  try {
    event = json === undefined ? undefined : (JSON.parse(json) as EventRecord);
  } catch {
    event = undefined;
  }
  return { entryId, event };
}

async function execOrThrow(tx: ReturnType<Redis['multi']>, what: string): Promise<[Error | null, unknown][]> {
  const results = await tx.exec();
  if (!results || results.some(([error]) => error)) throw new Error(`${what} could not be written`);
  return results;
}
