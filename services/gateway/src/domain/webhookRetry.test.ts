import { constructEvent } from '@tessera/sdk';
import type { EventRecord, QueuedDelivery, WebhookEndpointRecord } from '@tessera/merchant-data';
import {
  backoffDelayMs,
  endpointWants,
  isDelivered,
  nextAttemptAt,
  shouldDisable,
  signatureHeader,
  startableDeliveries,
  webhookBody,
} from './webhookRetry';

const POLICY = { baseMs: 1000, maxMs: 60_000, windowMs: 3 * 86_400_000 };

const queued = (eventId: string, objectKey: string, nextAttemptAt = 0): QueuedDelivery => ({
  eventId,
  order: 0,
  objectKey,
  type: 'token.created',
  attempts: 0,
  nextAttemptAt,
  queuedAt: 0,
  resends: 0,
});

const event: EventRecord = {
  id: 'evt_AAAAAAAAAAAAAAAA',
  type: 'token.created',
  created: 1_800_000_000,
  merchantId: 'shop',
  mode: 'test',
  data: { object: { id: 'tok_abcdefgh', last4: '4242' } },
};

const endpoint = (over: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord => ({
  id: 'we_1',
  merchantId: 'shop',
  mode: 'test',
  url: 'https://shop.example/events',
  enabledEvents: ['token.created'],
  status: 'enabled',
  createdAt: new Date(1_000).toISOString(),
  secrets: [{ generation: 1, expiresAt: null }],
  ...over,
});

describe('webhook retries', () => {
  it('draws each backoff below a ceiling that doubles per attempt up to the maximum', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, POLICY, 0.999_999))).toEqual([999, 1999, 3999, 7999]);
    expect(backoffDelayMs(30, POLICY, 0.5)).toBe(30_000);
    expect(backoffDelayMs(5000, POLICY, 0.999_999)).toBe(59_999);
    expect(backoffDelayMs(3, POLICY, 0)).toBe(0);
  });

  it('schedules retries inside the window and gives up once it is over', () => {
    expect(nextAttemptAt(0, 1, 10_000, POLICY, 0.5)).toBe(10_500);
    // The last attempt lands on the window's end, not after it.
    expect(nextAttemptAt(0, 40, POLICY.windowMs - 10, POLICY, 0.99)).toBe(POLICY.windowMs);
    expect(nextAttemptAt(0, 41, POLICY.windowMs, POLICY, 0.5)).toBeUndefined();
  });

  it('disables an endpoint only after failing for the whole disable period', () => {
    expect(shouldDisable(1000, 1000 + 59_999, 60_000)).toBe(false);
    expect(shouldDisable(1000, 1000 + 60_000, 60_000)).toBe(true);
  });

  it('counts only a 2xx as delivered (a redirect is not followed)', () => {
    expect([200, 204, 299].every(isDelivered)).toBe(true);
    expect([199, 301, 404, 500].some(isDelivered)).toBe(false);
  });
});

describe('order per object', () => {
  it('starts one delivery per object, none behind an earlier one of its object still queued or in flight, and none before it is due', () => {
    const head = [
      queued('e1', 'tok_a', 5000),
      queued('e2', 'tok_a'),
      queued('e3', 'tok_b'),
      queued('e4', 'tok_b'),
      queued('e5', 'tok_c'),
      queued('e6', 'tok_d'),
    ];
    expect(startableDeliveries(head, new Set(['tok_c']), 1000).map((d) => d.eventId)).toEqual(['e3', 'e6']);
    expect(startableDeliveries(head, new Set(), 5000).map((d) => d.eventId)).toEqual(['e1', 'e3', 'e5', 'e6']);
  });
});

describe('what an endpoint receives', () => {
  it('sends an event to enabled endpoints of its mode that subscribed to its type or to every type, created before it', () => {
    const at = 2_000;
    expect(endpointWants(endpoint(), event, at)).toBe(true);
    expect(endpointWants(endpoint({ enabledEvents: ['*'] }), event, at)).toBe(true);
    expect(endpointWants(endpoint({ enabledEvents: ['token.deleted'] }), event, at)).toBe(false);
    expect(endpointWants(endpoint({ mode: 'live' }), event, at)).toBe(false);
    expect(endpointWants(endpoint({ status: 'disabled' }), event, at)).toBe(false);
    expect(endpointWants(endpoint(), event, 999)).toBe(false);
  });

  it('never sends an endpoint the event of its own disabling', () => {
    const disabled: EventRecord = { ...event, type: 'webhook_endpoint.disabled', data: { object: { id: 'we_1', status: 'disabled' } } };
    expect(endpointWants(endpoint({ enabledEvents: ['*'] }), disabled, 2_000)).toBe(false);
    expect(endpointWants(endpoint({ id: 'we_2', enabledEvents: ['*'] }), disabled, 2_000)).toBe(true);
  });

  it('signs exactly the documented body, without the merchant id, so the SDK verifies it with any current secret', () => {
    const body = webhookBody(event);
    expect(body).toBe(
      '{"id":"evt_AAAAAAAAAAAAAAAA","type":"token.created","created":1800000000,"mode":"test","data":{"object":{"id":"tok_abcdefgh","last4":"4242"}}}',
    );
    const now = new Date();
    const header = signatureHeader(['whsec_new', 'whsec_old'], body, now);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(constructEvent(body, header, 'whsec_old')).toMatchObject({ id: event.id, type: 'token.created' });
    expect(() => constructEvent(body, header, 'whsec_other')).toThrow();
  });
});
