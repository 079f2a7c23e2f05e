/**
 * A merchant's webhook receiver on loopback for the delivery tests: it verifies each delivery with
 * the Node SDK's webhooks.constructEvent (the endpoint's secret derived as the gateway derives it)
 * and records what arrived. How it answers is set per endpoint path.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { createRedisClient } from '@tessera/common/redis';
import {
  buildEvent,
  newWebhookEndpointId,
  RedisEventStore,
  RedisWebhookEndpointStore,
  webhookSecret,
  type EventRecord,
  type EventType,
  type WebhookEndpointRecord,
} from '@tessera/merchant-data';
import { webhooks } from '@tessera/sdk';
import type { Stack } from './harness';

export interface Received {
  endpoint: string;
  /** Whether the signature verified with the endpoint's secret. */
  verified: boolean;
  id: string;
  type: string;
  objectId: string;
  /** The body's own keys, in order. */
  keys: string[];
  status: number;
}

/** `answer`: the status to answer, or 'hang' (never answers until `releaseHanging`). */
export type Answer = number | 'hang';

/** How long the receiver takes before each answer (0: at once). */
export let answerDelayMs = 0;
export function setAnswerDelay(ms: number): void {
  answerDelayMs = ms;
}

export class WebhookReceiver {
  readonly received: Received[] = [];
  private server: http.Server | undefined;
  private readonly secrets = new Map<string, string>();
  private readonly answers = new Map<string, (r: { id: string }) => Answer>();
  private readonly hanging: http.ServerResponse[] = [];
  /** Hanging requests that ended (the sender gave up, or releaseHanging). */
  hangingClosed = 0;
  origin = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const name = (req.url ?? '').slice(1);
        const raw = Buffer.concat(chunks);
        let verified = false;
        let parsed: { id?: string; type?: string; data?: { object?: { id?: string } } } = {};
        try {
          webhooks.constructEvent(raw, req.headers['tessera-signature'], this.secrets.get(name) ?? 'whsec_unknown');
          verified = true;
        } catch {
          verified = false;
        }
        try {
          parsed = JSON.parse(raw.toString()) as typeof parsed;
        } catch {
          parsed = {};
        }
        const answer = this.answers.get(name)?.({ id: parsed.id ?? '' }) ?? 200;
        this.received.push({
          endpoint: name,
          verified,
          id: parsed.id ?? '',
          type: parsed.type ?? '',
          objectId: parsed.data?.object?.id ?? '',
          keys: Object.keys(parsed),
          status: answer === 'hang' ? 0 : answer,
        });
        if (answer === 'hang') {
          this.hanging.push(res);
          res.on('close', () => (this.hangingClosed += 1));
        } else if (answerDelayMs > 0) setTimeout(() => res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok'), answerDelayMs);
        else res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Where `name`'s deliveries go, and how they are answered (default 200). */
  route(name: string, secret: string, answer?: (r: { id: string }) => Answer): string {
    this.secrets.set(name, secret);
    if (answer) this.answers.set(name, answer);
    return `${this.origin}/${name}`;
  }

  answer(name: string, answer: (r: { id: string }) => Answer): void {
    this.answers.set(name, answer);
  }

  /** Requests held without an answer and still open. */
  get hangingOpen(): number {
    return this.hanging.length - this.hangingClosed;
  }

  releaseHanging(): void {
    for (const res of this.hanging.splice(0)) res.destroy();
  }

  /** Distinct event ids `name` answered 2xx, in the order of those answers. */
  delivered(name: string): string[] {
    const ids: string[] = [];
    for (const r of this.received) if (r.endpoint === name && r.status >= 200 && r.status < 300 && !ids.includes(r.id)) ids.push(r.id);
    return ids;
  }

  async stop(): Promise<void> {
    this.releaseHanging();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Endpoints and events written straight into the stack's Redis, as the /v1 routes would. */
export class MerchantEvents {
  readonly redis: Redis;
  readonly endpoints: RedisWebhookEndpointStore;
  readonly events: RedisEventStore;

  constructor(
    private readonly stack: Stack,
    redisUrl: string,
  ) {
    this.redis = createRedisClient(redisUrl, { commandTimeoutMs: 5000, profile: 'server' });
    this.endpoints = new RedisWebhookEndpointStore(this.redis);
    this.events = new RedisEventStore(this.redis);
  }

  async connect(): Promise<this> {
    await this.redis.connect();
    return this;
  }

  /** A new endpoint of `merchantId` (test mode) and its signing secret, derived from the stack's pepper. */
  async endpoint(
    receiver: WebhookReceiver,
    merchantId: string,
    name: string,
    enabledEvents: WebhookEndpointRecord['enabledEvents'] = ['*'],
    answer?: (r: { id: string }) => Answer,
  ): Promise<WebhookEndpointRecord> {
    const id = newWebhookEndpointId();
    const secret = webhookSecret(this.stack.env.API_KEY_PEPPER as string, merchantId, 'test', id, 1);
    const record: WebhookEndpointRecord = {
      id,
      merchantId,
      mode: 'test',
      url: receiver.route(name, secret, answer),
      enabledEvents,
      status: 'enabled',
      createdAt: new Date().toISOString(),
      secrets: [{ generation: 1, expiresAt: null }],
    };
    expect(await this.endpoints.create(record)).toBe('created');
    return record;
  }

  async record(merchantId: string, objectId: string, type: EventType = 'token.updated'): Promise<EventRecord> {
    const event = buildEvent({ type, merchantId, mode: 'test', object: { id: objectId, last4: '4242' } });
    await this.events.record(event);
    return event;
  }

  close(): void {
    this.redis.disconnect();
  }
}
