import type { KeyMode } from '@tessera/common';
import {
  buildEvent,
  RedisAuditLog,
  RedisEventStore,
  RedisWebhookDeliveryStore,
  RedisWebhookEndpointStore,
  webhookSecret,
} from '@tessera/merchant-data';
import { webhookDeliveriesOver } from '../app/webhookDeliveriesPort';
import { newOperatorRecord } from '../domain/operators';
import { hashPassword } from '../domain/passwords';
import { RedisOperatorStore } from '../store/redisAdminStores';
import { anAdminDeps, TEST_PEPPER } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createAdminApp } from './adminRouter';

// One scrypt per sign-in, slow on a loaded machine.
jest.setTimeout(60_000);

const PASSWORD = 'operator-password-1';
const NOW = new Date('2026-11-26T12:00:00.000Z');

const db = useAdminRedis();
let app: RunningApp;
let session: { cookie: string; csrf: string };
let endpoints: RedisWebhookEndpointStore;
let audit: RedisAuditLog;
let deliveries: RedisWebhookDeliveryStore;
let events: RedisEventStore;

function login(body: unknown) {
  return app.request('POST', '/admin/v1/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function signIn(email: string): Promise<{ cookie: string; csrf: string }> {
  const res = await login({ email, password: PASSWORD });
  expect(res.status).toBe(200);
  return { cookie: (res.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '', csrf: res.json().csrfToken };
}

function call(method: string, path: string, body?: unknown, as = session) {
  return app.request(method, `/admin/v1${path}`, {
    headers: {
      cookie: as.cookie,
      'x-csrf-token': as.csrf,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

const base = (merchant = 'acme') => `/merchants/${merchant}/webhook-endpoints`;

async function create(mode: KeyMode = 'test', url = 'https://shop.example/tessera-events') {
  const res = await call('POST', `${base()}?mode=${mode}`, { url, enabledEvents: ['token.created', 'form_session.completed'] });
  expect(res.status).toBe(201);
  return res.json();
}

async function auditActions(): Promise<{ action: string; details: Record<string, unknown> }[]> {
  return audit.list({ merchantId: 'acme', limit: 100 });
}

beforeAll(async () => {
  const operators = new RedisOperatorStore(db.redis);
  for (const [email, merchantId] of [
    ['ops@acme.test', 'acme'],
    ['ops@globex.test', 'globex'],
  ] as const) {
    await operators.create(newOperatorRecord({ email, passwordHash: await hashPassword(PASSWORD), merchantId, now: new Date() }));
  }
  endpoints = new RedisWebhookEndpointStore(db.redis);
  audit = new RedisAuditLog(db.redis, 1000);
  deliveries = new RedisWebhookDeliveryStore(db.redis);
  events = new RedisEventStore(db.redis);
  app = await startApp(
    createAdminApp(
      anAdminDeps(db.redis, {
        operators,
        webhookEndpoints: endpoints,
        audit,
        webhookDeliveries: webhookDeliveriesOver(deliveries, events, () => NOW),
        now: () => NOW,
      }),
    ),
  );
  session = await signIn('ops@acme.test');
});

afterAll(() => app.close());

beforeEach(async () => {
  for (const mode of ['test', 'live'] as const) {
    for (const e of await endpoints.list('acme', mode)) await endpoints.delete('acme', mode, e.id);
  }
});

describe('admin webhook endpoint routes', () => {
  it('creates an endpoint and shows its secret once: the list and the audit log never hold it', async () => {
    const created = await create();
    expect(created).toMatchObject({
      id: expect.stringMatching(/^we_[A-Za-z0-9_-]{32}$/),
      object: 'webhook_endpoint',
      merchantId: 'acme',
      mode: 'test',
      url: 'https://shop.example/tessera-events',
      enabledEvents: ['token.created', 'form_session.completed'],
      status: 'enabled',
      createdAt: NOW.toISOString(),
      previousSecretExpiresAt: null,
    });
    // The secret the delivery worker derives for generation 1: receivers verify with this one.
    expect(created.secret).toBe(webhookSecret(TEST_PEPPER, 'acme', 'test', created.id, 1));

    const list = await call('GET', `${base()}?mode=test`);
    expect(list.status).toBe(200);
    expect(list.json()).toMatchObject({ object: 'list', mode: 'test', hasMore: false, data: [{ id: created.id, status: 'enabled' }] });
    expect(list.json().eventTypes).toEqual(expect.arrayContaining(['token.created', 'webhook_endpoint.disabled']));
    expect(list.body.toString()).not.toContain('whsec_');
    expect((await call('GET', `${base()}?mode=live`)).json().data).toEqual([]);

    const [entry] = await auditActions();
    expect(entry).toMatchObject({
      action: 'webhook_endpoint.created',
      details: { mode: 'test', endpointId: created.id, url: 'https://shop.example/tessera-events' },
    });
    expect(JSON.stringify(await auditActions())).not.toContain('whsec_');
  });

  it('keeps a receiver token in the URL out of the audit log', async () => {
    await create('test', 'https://shop.example/hooks?token=receiver-secret');
    const [entry] = await auditActions();
    expect(entry?.details.url).toBe('https://shop.example/hooks?…');
  });

  it.each<[string, KeyMode, unknown, string, RegExp]>([
    ['an http URL for live', 'live', { url: 'http://shop.example/e', enabledEvents: ['*'] }, 'url', /https:\/\/ for a live key/],
    ['credentials in the URL', 'test', { url: 'https://u:p@shop.example/e', enabledEvents: ['*'] }, 'url', /user name or password/],
    [
      'an unknown event type',
      'test',
      { url: 'https://shop.example/e', enabledEvents: ['token.stolen'] },
      'enabledEvents',
      /not an event type/,
    ],
    ['no events', 'test', { url: 'https://shop.example/e', enabledEvents: [] }, 'enabledEvents', /non-empty/],
    ['a missing url', 'test', { enabledEvents: ['*'] }, 'url', /url/],
    ['an unknown field', 'test', { url: 'https://shop.example/e', enabledEvents: ['*'], secret: 'x' }, 'secret', /secret/],
  ])('refuses %s with 400 naming the field', async (_label, mode, body, param, message) => {
    const res = await call('POST', `${base()}?mode=${mode}`, body);
    expect(res.status).toBe(400);
    expect(res.json().error).toMatchObject({ param });
    expect(res.json().error.message).toMatch(message);
    expect(await endpoints.list('acme', mode)).toEqual([]);
  });

  it('needs the mode, and refuses another merchant with 403 before reading anything', async () => {
    const noMode = await call('GET', base());
    expect(noMode.status).toBe(400);
    expect(noMode.json().error).toMatchObject({ param: 'mode' });
    const other = await call('POST', `${base('globex')}?mode=test`, { url: 'https://x.example/', enabledEvents: ['*'] });
    expect(other.status).toBe(403);
    expect(other.json().error.code).toBe('merchant_forbidden');
    expect(await endpoints.list('globex', 'test')).toEqual([]);
  });

  it('answers an unknown id, another mode’s id and another merchant’s id alike: 404 or 403, never the endpoint', async () => {
    const created = await create('test');
    const unknown = await call('POST', `${base()}/we_${'x'.repeat(32)}/enable?mode=test`);
    expect(unknown.status).toBe(404);
    expect(unknown.json().error.code).toBe('webhook_endpoint_not_found');
    expect((await call('DELETE', `${base()}/${created.id}?mode=live`)).status).toBe(404);
    const globex = await signIn('ops@globex.test');
    expect((await call('GET', `${base()}?mode=test`, undefined, globex)).status).toBe(403);
    expect((await call('GET', `${base()}/not-an-id/deliveries?mode=test`)).status).toBe(400);
    expect(await endpoints.get('acme', 'test', created.id)).toBeDefined();
  });

  it('rotates the secret: a new one shown once, the old one signing until the overlap ends, audited', async () => {
    const created = await create();
    const rotated = await call('POST', `${base()}/${created.id}/rotate-secret?mode=test`, { expiresInSeconds: 3600 });
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const body = rotated.json();
    expect(body.secret).toBe(webhookSecret(TEST_PEPPER, 'acme', 'test', created.id, 2));
    expect(body.previousSecretExpiresAt).toBe(new Date(NOW.getTime() + 3600_000).toISOString());
    // Without a body: the default overlap of 24 hours.
    const again = await call('POST', `${base()}/${created.id}/rotate-secret?mode=test`);
    expect(again.status).toBe(200);
    expect(again.json().secret).toBe(webhookSecret(TEST_PEPPER, 'acme', 'test', created.id, 3));
    const tooLong = await call('POST', `${base()}/${created.id}/rotate-secret?mode=test`, { expiresInSeconds: 8 * 86400 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json().error).toMatchObject({ code: 'parameter_invalid', param: 'expiresInSeconds' });
    const actions = (await auditActions()).map((e) => e.action);
    expect(actions.filter((a) => a === 'webhook_endpoint.secret_rotated')).toHaveLength(2);
    expect(JSON.stringify(await auditActions())).not.toContain('whsec_');
  });

  it('enables a disabled endpoint again, audited with why it was disabled; enabling an enabled one changes nothing', async () => {
    const created = await create();
    await endpoints.setStatus('acme', 'test', created.id, 'disabled', 'failing_since:2026-11-23T12:00:00.000Z');
    const listed = (await call('GET', `${base()}?mode=test`)).json().data[0];
    expect(listed).toMatchObject({ status: 'disabled', disabledReason: 'failing_since:2026-11-23T12:00:00.000Z' });
    const enabled = await call('POST', `${base()}/${created.id}/enable?mode=test`);
    expect(enabled.status).toBe(200);
    expect(enabled.json()).toMatchObject({ status: 'enabled', disabledReason: null });
    expect((await endpoints.get('acme', 'test', created.id))?.status).toBe('enabled');
    expect((await call('POST', `${base()}/${created.id}/enable?mode=test`)).status).toBe(200);
    const enables = (await auditActions()).filter((e) => e.action === 'webhook_endpoint.enabled');
    expect(enables).toHaveLength(1);
    expect(enables[0]?.details.disabledReason).toBe('failing_since:2026-11-23T12:00:00.000Z');
  });

  it('deletes an endpoint with 204; a second delete is 404', async () => {
    const created = await create();
    const deleted = await call('DELETE', `${base()}/${created.id}?mode=test`);
    expect(deleted.status).toBe(204);
    expect(await endpoints.get('acme', 'test', created.id)).toBeUndefined();
    expect((await call('DELETE', `${base()}/${created.id}?mode=test`)).status).toBe(404);
    expect((await auditActions())[0]).toMatchObject({ action: 'webhook_endpoint.deleted', details: { endpointId: created.id } });
  });

  it('refuses the 17th endpoint of a mode with 400 webhook_endpoint_limit_reached', async () => {
    for (let i = 0; i < 16; i++) await create('test', `https://shop.example/e${i}`);
    const res = await call('POST', `${base()}?mode=test`, { url: 'https://shop.example/e16', enabledEvents: ['*'] });
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe('webhook_endpoint_limit_reached');
  });

  it('refuses a change without the session’s CSRF token', async () => {
    const created = await create();
    const res = await call('DELETE', `${base()}/${created.id}?mode=test`, undefined, { ...session, csrf: 'wrong' });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe('csrf_token_invalid');
    expect(await endpoints.get('acme', 'test', created.id)).toBeDefined();
  });

  it('lists an endpoint’s recent deliveries as the dispatcher logged them, and resends one event, audited', async () => {
    const created = await create();
    const event = buildEvent({ type: 'token.created', merchantId: 'acme', mode: 'test', object: { id: 'tok_aaaaaaaa', last4: '4242' } });
    await events.record(event);
    const first = { eventId: event.id, type: event.type, latencyMs: 42, at: NOW.toISOString() };
    await deliveries.recordFailure(
      'acme',
      created.id,
      { ...first, attempt: 1, outcome: 'failed', status: 500, nextAttemptAt: NOW.toISOString() },
      NOW.getTime(),
      NOW,
    );
    await deliveries.recordSuccess('acme', created.id, { ...first, attempt: 2, outcome: 'succeeded', status: 200 });

    const listed = await call('GET', `${base()}/${created.id}/deliveries?mode=test&limit=10`);
    expect(listed.status).toBe(200);
    expect(listed.json()).toEqual({
      object: 'list',
      endpointId: created.id,
      deliveries: [
        {
          eventId: event.id,
          eventType: 'token.created',
          attempt: 2,
          outcome: 'succeeded',
          responseStatus: 200,
          latencyMs: 42,
          error: null,
          at: NOW.toISOString(),
          nextAttemptAt: null,
        },
        {
          eventId: event.id,
          eventType: 'token.created',
          attempt: 1,
          outcome: 'failed',
          responseStatus: 500,
          latencyMs: 42,
          error: null,
          at: NOW.toISOString(),
          nextAttemptAt: NOW.toISOString(),
        },
      ],
      queued: { depth: 0, oldestCreatedAt: null },
    });
    expect((await call('GET', `${base()}/${created.id}/deliveries?mode=test&limit=1`)).json().deliveries).toHaveLength(1);
    expect((await call('GET', `${base()}/${created.id}/deliveries?mode=test&limit=0`)).status).toBe(400);
    expect((await call('GET', `${base()}/${created.id}/deliveries?mode=test&limit=101`)).status).toBe(400);

    // Delivered already, it is queued again, due now, under its own id.
    const resent = await call('POST', `${base()}/${created.id}/deliveries/${event.id}/resend?mode=test`);
    expect(resent.status).toBe(202);
    expect(resent.json()).toEqual({ endpointId: created.id, eventId: event.id, status: 'queued' });
    expect((await deliveries.queueHead('acme', created.id, 10)).map((d) => [d.eventId, d.nextAttemptAt])).toEqual([[event.id, 0]]);
    expect((await call('GET', `${base()}/${created.id}/deliveries?mode=test`)).json().queued).toEqual({
      depth: 1,
      oldestCreatedAt: new Date(event.created * 1000).toISOString(),
    });
    expect((await auditActions())[0]).toMatchObject({
      action: 'webhook_delivery.resent',
      details: { endpointId: created.id, eventId: event.id },
    });

    const unknown = await call('POST', `${base()}/${created.id}/deliveries/evt_BBBBBBBBBBBBBBBB/resend?mode=test`);
    expect(unknown.status).toBe(404);
    expect(unknown.json().error.code).toBe('event_not_found');
    // Another merchant's event is unknown here.
    const globex = buildEvent({ type: 'token.created', merchantId: 'globex', mode: 'test', object: { id: 'tok_cccccccc', last4: '4242' } });
    await events.record(globex);
    expect((await call('POST', `${base()}/${created.id}/deliveries/${globex.id}/resend?mode=test`)).status).toBe(404);
    expect((await call('POST', `${base()}/${created.id}/deliveries/evt_short/resend?mode=test`)).status).toBe(400);
  });

  it('drops a deleted endpoint’s queue and delivery log with it', async () => {
    const created = await create();
    const event = buildEvent({ type: 'token.created', merchantId: 'acme', mode: 'test', object: { id: 'tok_aaaaaaaa', last4: '4242' } });
    await events.record(event);
    await deliveries.requeue('acme', created.id, event, NOW);
    await deliveries.recordSuccess('acme', created.id, {
      eventId: event.id,
      type: event.type,
      attempt: 1,
      outcome: 'succeeded',
      status: 200,
      latencyMs: 1,
      at: NOW.toISOString(),
    });
    expect((await call('DELETE', `${base()}/${created.id}?mode=test`)).status).toBe(204);
    expect(await deliveries.log('acme', created.id)).toEqual([]);
    expect((await deliveries.queueStats('acme', created.id)).depth).toBe(0);
  });
});

describe('admin webhook routes under required two-factor', () => {
  const mfa = useAdminRedis();
  let strict: RunningApp;

  beforeAll(async () => {
    const operators = new RedisOperatorStore(mfa.redis);
    await operators.create(
      newOperatorRecord({ email: 'new@acme.test', passwordHash: await hashPassword(PASSWORD), merchantId: 'acme', now: new Date() }),
    );
    strict = await startApp(createAdminApp(anAdminDeps(mfa.redis, { operators, mfaRequired: true })));
  });
  afterAll(() => strict.close());

  it('refuses an operator who has not set up the second factor yet, as every other admin change', async () => {
    const signedIn = await strict.request('POST', '/admin/v1/login', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'new@acme.test', password: PASSWORD }),
    });
    expect(signedIn.json().mfaEnrolmentRequired).toBe(true);
    const cookie = (signedIn.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '';
    const res = await strict.request('POST', `/admin/v1${base()}?mode=test`, {
      headers: { cookie, 'x-csrf-token': signedIn.json().csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://shop.example/e', enabledEvents: ['*'] }),
    });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe('mfa_enrolment_required');
    expect(await new RedisWebhookEndpointStore(mfa.redis).list('acme', 'test')).toEqual([]);
  });
});
