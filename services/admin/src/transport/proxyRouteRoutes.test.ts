import { findCardNumberRuns } from '@tessera/common';
import { RedisAuditLog } from '@tessera/merchant-data';
import { RedisRouteStore } from '@tessera/routes';
import { newOperatorRecord } from '../domain/operators';
import { hashPassword } from '../domain/passwords';
import { RedisOperatorStore } from '../store/redisAdminStores';
import { anAdminDeps } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createAdminApp } from './adminRouter';

// One scrypt per sign-in, slow on a loaded machine.
jest.setTimeout(60_000);

const PASSWORD = 'operator-password-1';
const NOW = new Date('2026-11-26T12:00:00.000Z');
const TEST_PAN = '4242424242424242';

const db = useAdminRedis();
let app: RunningApp;
let acme: { cookie: string; csrf: string };
let platform: { cookie: string; csrf: string };
let audit: RedisAuditLog;

const ROUTE_FILE = `id: inbound-checkout
kind: inbound
mode: test
inbound:
  path: /checkout
  upstream: https://shop.example/checkout
filters:
  - { location: json, pointer: /card/number, store: number, aliasFormat: card_bin_last4 }
  - { location: json, pointer: /card/cvc, store: cvv }
unmatchedCardData: refuse
---
id: stripe
kind: outbound
mode: test
outbound:
  hosts: [api.stripe.com]
filters:
  - { location: form, field: 'card[number]', store: number }
`;

/** The same routes for another merchant, on an inbound path of its own. */
const GLOBEX_FILE = ROUTE_FILE.replace('path: /checkout', 'path: /globex/checkout');

async function signIn(email: string): Promise<{ cookie: string; csrf: string }> {
  const res = await app.request('POST', '/admin/v1/login', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return { cookie: (res.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '', csrf: res.json().csrfToken };
}

function call(method: string, path: string, opts: { as?: typeof acme; body?: string; type?: string; csrf?: boolean } = {}) {
  const as = opts.as ?? acme;
  return app.request(method, `/admin/v1${path}`, {
    headers: {
      cookie: as.cookie,
      ...(opts.csrf === false ? {} : { 'x-csrf-token': as.csrf }),
      ...(opts.body !== undefined ? { 'content-type': opts.type ?? 'application/json' } : {}),
    },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
}

const applyYaml = (text: string, query = '', as = acme) => call('POST', `/routes${query}`, { as, body: text, type: 'application/yaml' });

beforeAll(async () => {
  const operators = new RedisOperatorStore(db.redis);
  for (const [email, merchantId] of [
    ['ops@acme.test', 'acme'],
    ['ops@globex.test', 'globex'],
    ['platform@tessera.test', null],
  ] as const) {
    await operators.create(newOperatorRecord({ email, passwordHash: await hashPassword(PASSWORD), merchantId, now: new Date() }));
  }
  audit = new RedisAuditLog(db.redis, 1000);
  app = await startApp(createAdminApp(anAdminDeps(db.redis, { operators, routes: new RedisRouteStore(db.redis), audit, now: () => NOW })));
  acme = await signIn('ops@acme.test');
  platform = await signIn('platform@tessera.test');
});

afterAll(async () => {
  await app.close();
});

describe('/admin/v1/routes', () => {
  it('applies a YAML route file to the operator’s own merchant, then says unchanged for the same file, and audits each change', async () => {
    const first = await applyYaml(ROUTE_FILE);
    expect(first.status).toBe(201);
    expect(first.json().merchantId).toBe('acme');
    expect(first.json().routes.map((r: { route: { id: string }; outcome: string }) => [r.route.id, r.outcome])).toEqual([
      ['inbound-checkout', 'created'],
      ['stripe', 'created'],
    ]);
    const again = await applyYaml(ROUTE_FILE);
    expect(again.status).toBe(200);
    expect(again.json().routes.map((r: { outcome: string }) => r.outcome)).toEqual(['unchanged', 'unchanged']);
    const changed = await applyYaml(ROUTE_FILE.replace('unmatchedCardData: refuse', 'unmatchedCardData: redact'));
    expect(changed.json().routes[0]).toMatchObject({ outcome: 'updated', changed: ['unmatchedCardData'] });
    const actions = (await audit.list({ merchantId: 'acme', limit: 100 })).filter((e) => e.action === 'route.applied');
    expect(actions).toHaveLength(3);
    expect(actions[0]).toMatchObject({ details: { routeId: 'inbound-checkout', outcome: 'updated' } });
  });

  it('applies a JSON document the same way, and the per-merchant path sees it', async () => {
    const route = {
      id: 'json-route',
      kind: 'outbound',
      mode: 'test',
      outbound: { hosts: ['api.psp.test'] },
      filters: [{ location: 'json', pointer: '/card/number', store: 'number' }],
    };
    const res = await call('POST', '/routes?merchantId=acme', { body: JSON.stringify({ routes: [route] }) });
    expect(res.status).toBe(201);
    const shown = await call('GET', '/merchants/acme/routes/json-route');
    expect(shown.status).toBe(200);
    expect(shown.json().route.outbound.hosts).toEqual(['api.psp.test']);
  });

  it('refuses an invalid file whole, saying where, and applies none of it', async () => {
    const bad = await applyYaml(`${ROUTE_FILE}---\nid: Broken Id\nkind: inbound\n`);
    expect(bad.status).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'parameter_invalid', message: expect.stringMatching(/^routes\[2\]\.id: /) });
    const notYaml = await applyYaml('id: [unclosed');
    expect(notYaml.status).toBe(400);
    expect(notYaml.json().error.message).toMatch(/not YAML or JSON/);
    const other = await call('POST', '/routes', { body: 'id: x', type: 'text/html' });
    expect(other.status).toBe(415);
    const empty = await applyYaml('  ');
    expect(empty.json().error.code).toBe('parameter_missing');
    expect((await call('GET', '/routes/acme/broken-id')).status).toBe(404);
  });

  it('needs a platform operator to name the merchant, and keeps a merchant operator to their own', async () => {
    const unnamed = await applyYaml(ROUTE_FILE, '', platform);
    expect(unnamed.status).toBe(400);
    expect(unnamed.json().error).toMatchObject({ code: 'parameter_missing', param: 'merchantId' });
    // Inbound paths are unique across merchants: globex's own file serves another path.
    const taken = await applyYaml(ROUTE_FILE, '?merchantId=globex', platform);
    expect(taken.status).toBe(409);
    expect(taken.json().error).toMatchObject({ code: 'proxy_route_address_taken', param: 'inbound.path' });
    expect((await applyYaml(GLOBEX_FILE, '?merchantId=globex', platform)).status).toBe(201);
    const foreign = await applyYaml(GLOBEX_FILE, '?merchantId=globex');
    expect(foreign.status).toBe(403);
    expect(foreign.json().error.code).toBe('merchant_forbidden');
    expect((await call('GET', '/routes/globex/stripe')).status).toBe(403);
    expect((await call('DELETE', '/routes/globex/stripe')).status).toBe(403);
    const noCsrf = await call('POST', '/routes', { body: ROUTE_FILE, type: 'application/yaml', csrf: false });
    expect(noCsrf.status).toBe(403);
  });

  it('lists one merchant’s routes, or every merchant’s in reach', async () => {
    const own = await call('GET', '/routes');
    expect(own.status).toBe(200);
    expect(new Set(own.json().routes.map((r: { merchantId: string }) => r.merchantId))).toEqual(new Set(['acme']));
    const all = await call('GET', '/routes', { as: platform });
    expect(all.json().routes.map((r: { merchantId: string; route: { id: string } }) => `${r.merchantId}/${r.route.id}`)).toEqual([
      'acme/inbound-checkout',
      'acme/json-route',
      'acme/stripe',
      'globex/inbound-checkout',
      'globex/stripe',
    ]);
    const one = await call('GET', '/routes?merchantId=globex', { as: platform });
    expect(one.json().routes).toHaveLength(2);
    expect((await call('GET', '/routes?merchantId=globex')).status).toBe(403);
  });

  it('dry-runs a sample on a stored route with the card number masked, and refuses a card that is not a test card', async () => {
    const sample = { contentType: 'application/json', body: JSON.stringify({ card: { number: TEST_PAN, cvc: '123' } }) };
    const res = await call('POST', '/routes/acme/inbound-checkout/dry-run', { body: JSON.stringify(sample) });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.toString('utf8')).not.toContain(TEST_PAN);
    expect(res.body.toString('utf8')).not.toContain('"123"');
    expect(res.json()).toMatchObject({ routeId: 'inbound-checkout', outcome: 'forwarded' });
    expect(res.json().places[0]).toMatchObject({ store: 'number', value: '424242******4242', becomes: '424242XXXXXX4242' });
    expect(findCardNumberRuns(res.body.toString('utf8'))).toEqual([]);
    // Not a published test card: not the dashboard's to see.
    const real = await call('POST', '/routes/acme/inbound-checkout/dry-run', {
      body: JSON.stringify({ ...sample, body: JSON.stringify({ card: { number: '4111111111111111' } }) }),
    });
    expect(real.status).toBe(400);
    expect(real.json().error).toMatchObject({ code: 'parameter_invalid', param: 'body' });
    expect(findCardNumberRuns(real.body.toString('utf8'))).toEqual([]);
  });

  it('shows and deletes one route, audited, and a deleted route is gone', async () => {
    const shown = await call('GET', '/routes/acme/stripe');
    expect(shown.status).toBe(200);
    expect(shown.json()).toMatchObject({ merchantId: 'acme', route: { id: 'stripe', kind: 'outbound' }, updatedAt: NOW.toISOString() });
    expect(shown.json().yaml).toMatch(/^id: stripe\nkind: outbound\n/);
    expect((await call('DELETE', '/routes/acme/stripe')).status).toBe(204);
    const gone = await call('GET', '/routes/acme/stripe');
    expect(gone.status).toBe(404);
    expect(gone.json().error.code).toBe('proxy_route_not_found');
    expect((await call('DELETE', '/routes/acme/stripe')).status).toBe(404);
    const deleted = (await audit.list({ merchantId: 'acme', limit: 100 })).find((e) => e.action === 'route.deleted');
    expect(deleted).toMatchObject({ details: { routeId: 'stripe' } });
  });
});
