import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '@tessera/stack';
import { findCardNumberRuns } from '@tessera/common';
import { loggedIn } from './adminClient';
import { useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack();
const acmeId = env.merchant('acme');
const globexId = env.merchant('globex');
const PLATFORM = { email: `platform-${acmeId}@tessera.test`, password: 'platform-password-1' };
const ACME = { email: `ops-${acmeId}@acme.test`, password: 'acme-password-123' };

const PAN = '4242424242424242';
const OTHER_PAN = '5555555555554444';
/** Luhn-valid, not a published test card. */
const REAL_LOOKING_PAN = '4111111111111111';

const inboundRoute = {
  id: 'inbound-checkout',
  kind: 'inbound',
  mode: 'test',
  inbound: { path: '/checkout', upstream: 'https://shop.example/checkout' },
  filters: [
    { location: 'json', pointer: '/card/number', store: 'number', aliasFormat: 'card_bin_last4' },
    { location: 'json', pointer: '/card/cvc', store: 'cvv' },
  ],
};

/** `npm run routes`, the admin service's CLI, on the stack's Redis, as an operator runs it. */
function routesCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'services/admin/dist/cli/routes.js'), ...args], {
    cwd: ROOT,
    env: env.stack.env,
    encoding: 'utf8',
    timeout: 15_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

let dir: string;
beforeAll(() => {
  env.stack.createOperator(PLATFORM.email, PLATFORM.password, null);
  env.stack.createOperator(ACME.email, ACME.password, acmeId);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-routes-it-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('proxy routes in the admin API', () => {
  it('creates, shows, lists, replaces and deletes a route, each change audited', async () => {
    const admin = await loggedIn(env.stack.adminUrl, ACME.email, ACME.password);
    const base = `/merchants/${acmeId}/routes`;
    const created = await admin.call('PUT', `${base}/inbound-checkout`, inboundRoute);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ outcome: 'created', route: { id: 'inbound-checkout', unmatchedCardData: 'refuse' } });

    expect((await admin.call('GET', `${base}/inbound-checkout`)).body.route.filters[1]).toEqual({
      location: 'json',
      pointer: '/card/cvc',
      store: 'cvv',
      aliasFormat: 'token',
    });
    const replaced = await admin.call('PUT', `${base}/inbound-checkout`, { ...inboundRoute, unmatchedCardData: 'redact' });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ outcome: 'updated', changed: ['unmatchedCardData'] });
    expect((await admin.call('GET', base)).body.routes.map((r: { route: { id: string } }) => r.route.id)).toEqual(['inbound-checkout']);

    const audit = await admin.call('GET', `/audit?merchantId=${acmeId}`);
    expect(
      audit.body.entries.filter((e: { action: string }) => e.action === 'route.applied').map((e: { details: unknown }) => e.details),
    ).toEqual([
      { routeId: 'inbound-checkout', kind: 'inbound', mode: 'test', outcome: 'updated', changed: ['unmatchedCardData'] },
      { routeId: 'inbound-checkout', kind: 'inbound', mode: 'test', outcome: 'created', changed: [] },
    ]);

    expect((await admin.call('DELETE', `${base}/inbound-checkout`)).status).toBe(204);
    const gone = await admin.call('GET', `${base}/inbound-checkout`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('proxy_route_not_found');
  });

  it('refuses an invalid document with 400 naming where, a mismatched id, another merchant, and a change without the CSRF token', async () => {
    const admin = await loggedIn(env.stack.adminUrl, ACME.email, ACME.password);
    const bad = await admin.call('PUT', `/merchants/${acmeId}/routes/inbound-checkout`, {
      ...inboundRoute,
      filters: [{ location: 'json', pointer: 'card', store: 'number' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^filters\[0\]\.pointer: A JSON pointer/);
    const mismatched = await admin.call('PUT', `/merchants/${acmeId}/routes/other`, inboundRoute);
    expect(mismatched.status).toBe(400);
    expect(mismatched.body.error).toMatchObject({ param: 'id' });
    const foreign = await admin.call('PUT', `/merchants/${globexId}/routes/inbound-checkout`, inboundRoute);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('merchant_forbidden');
    const noCsrf = await admin.call('PUT', `/merchants/${acmeId}/routes/inbound-checkout`, inboundRoute, { 'x-csrf-token': '' });
    expect(noCsrf.status).toBe(403);
    expect((await admin.call('GET', `/merchants/${acmeId}/routes`)).body.routes).toEqual([]);
  });

  it('dry-runs a sample with placeholder aliases and masked values, never echoing or logging the card numbers', async () => {
    const admin = await loggedIn(env.stack.adminUrl, PLATFORM.email, PLATFORM.password);
    await admin.call('PUT', `/merchants/${acmeId}/routes/inbound-checkout`, inboundRoute);
    const sample = JSON.stringify({ card: { number: PAN, cvc: '123' }, memo: `spare card ${OTHER_PAN}` });
    const res = await admin.call('POST', `/merchants/${acmeId}/routes/inbound-checkout/dry-run`, {
      contentType: 'application/json',
      body: sample,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      outcome: 'refused',
      unmatchedCardData: 1,
      places: [
        { store: 'number', value: '424242******4242', becomes: '424242XXXXXX4242' },
        { store: 'cvv', value: '***', becomes: 'tok.dry_run_placeholder' },
      ],
    });
    expect(JSON.parse(res.body.body)).toEqual({
      card: { number: '424242XXXXXX4242', cvc: 'tok.dry_run_placeholder' },
      memo: 'spare card [redacted]',
    });
    expect(findCardNumberRuns(res.text)).toEqual([]);

    // A number that is not a published test card is not the dashboard's to see.
    const real = await admin.call('POST', `/merchants/${acmeId}/routes/inbound-checkout/dry-run`, {
      contentType: 'application/json',
      body: JSON.stringify({ card: { number: REAL_LOOKING_PAN, cvc: '123' } }),
    });
    expect(real.status).toBe(400);
    expect(real.body.error).toMatchObject({ code: 'parameter_invalid', param: 'body' });
    expect(findCardNumberRuns(real.text)).toEqual([]);
    expect(env.stack.logs()).not.toMatch(new RegExp(`${PAN}|${OTHER_PAN}|${REAL_LOOKING_PAN}`));
  });
});

describe('npm run routes', () => {
  it('applies a YAML file the admin API then shows, and dry-runs and deletes with it', async () => {
    const file = path.join(dir, 'routes.yaml');
    fs.writeFileSync(
      file,
      `id: stripe\nkind: outbound\nmode: test\noutbound:\n  hosts: [api.stripe.com]\nfilters:\n  - { location: form, field: "card[number]", store: number }\n`,
    );
    const applied = routesCli(['apply', '--merchant', globexId, '--file', file]);
    expect(applied).toMatchObject({ status: 0 });
    expect(applied.stdout).toMatch(/^created stripe\n/);

    const admin = await loggedIn(env.stack.adminUrl, PLATFORM.email, PLATFORM.password);
    expect((await admin.call('GET', `/merchants/${globexId}/routes/stripe`)).body.route.outbound).toEqual({ hosts: ['api.stripe.com'] });
    expect(routesCli(['list', '--merchant', globexId]).stdout).toMatch(/^stripe {2}outbound test {2}api.stripe.com/);

    const sample = path.join(dir, 'charge.form');
    fs.writeFileSync(sample, 'amount=100&card%5Bnumber%5D=tok.abcdefghijklmnopqrst');
    const dry = routesCli(['dry-run', '--merchant', globexId, '--route', 'stripe', '--file', sample, '--json']);
    expect(dry.status).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ body: 'amount=100&card%5Bnumber%5D=%5BCARD_NUMBER%5D' });

    expect(routesCli(['delete', '--merchant', globexId, '--route', 'stripe'])).toMatchObject({ status: 0 });
    expect((await admin.call('GET', `/merchants/${globexId}/routes`)).body.routes).toEqual([]);
  });
});
