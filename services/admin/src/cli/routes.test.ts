import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { RedisAuditLog } from '@tessera/merchant-data';
import { startRedisServer, type RedisServer } from '@tessera/test-support';
import { runRoutesCli } from './routes';

const ROUTES_YAML = `
id: inbound-checkout
kind: inbound
mode: test
inbound: { path: /checkout, upstream: 'https://shop.example/checkout' }
filters:
  - { location: json, pointer: /card/number, store: number, aliasFormat: card_bin_last4 }
  - { location: json, pointer: /card/cvc, store: cvv }
---
id: stripe
kind: outbound
mode: test
outbound: { hosts: [api.stripe.com] }
filters:
  - { location: form, field: "card[number]", store: number }
`;

describe('routes CLI', () => {
  let server: RedisServer;
  let redis: Redis;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  const file = (name: string, text: string): string => {
    const at = path.join(dir, name);
    fs.writeFileSync(at, text);
    return at;
  };
  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runRoutesCli(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
    env = { REDIS_URL: server.url, API_KEY_PEPPER: 'routes-cli-test-pepper-0123456789abcdef', NODE_ENV: 'test' };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-routes-cli-'));
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await redis.flushall();
  });

  it('applies a file, says what it created, and lists and shows the routes', async () => {
    const applied = await run('apply', '--merchant', 'dev', '--file', file('routes.yaml', ROUTES_YAML));
    expect(applied).toMatchObject({ code: 0 });
    expect(applied.out).toMatch(/^created inbound-checkout\ncreated stripe\n/);
    const listed = await run('list', '--merchant', 'dev');
    expect(listed.out).toMatch(/^inbound-checkout {2}inbound test {2}\/checkout -> https:\/\/shop.example\/checkout {2}2 filter\(s\)/);
    expect(listed.out).toMatch(/\nstripe {2}outbound test {2}api.stripe.com/);
    const shown = await run('show', '--merchant', 'dev', '--route', 'stripe');
    expect(shown.out).toContain('hosts:\n    - api.stripe.com');
    const audit = await new RedisAuditLog(redis, 100).list({ merchantId: 'dev', limit: 10 });
    expect(audit.map((a) => [a.action, a.details.routeId, a.details.outcome])).toEqual([
      ['route.applied', 'stripe', 'created'],
      ['route.applied', 'inbound-checkout', 'created'],
    ]);
  });

  it('shows what changes on a second apply, and changes nothing with --dry', async () => {
    await run('apply', '--merchant', 'dev', '--file', file('routes.yaml', ROUTES_YAML));
    const changed = file('changed.yaml', ROUTES_YAML.replace('hosts: [api.stripe.com]', 'hosts: [api.stripe.com, files.stripe.com]'));
    const dry = await run('apply', '--merchant', 'dev', '--file', changed, '--dry');
    expect(dry.out).toBe(
      'inbound-checkout unchanged\nwould update stripe\n  - outbound: {"hosts":["api.stripe.com"]}\n  + outbound: {"hosts":["api.stripe.com","files.stripe.com"]}',
    );
    expect(JSON.parse((await run('show', '--merchant', 'dev', '--route', 'stripe', '--json')).out).route.outbound.hosts).toEqual([
      'api.stripe.com',
    ]);
    const real = await run('apply', '--merchant', 'dev', '--file', changed);
    expect(real.out).toMatch(/^inbound-checkout unchanged\nupdated stripe\n/);
  });

  it('refuses an invalid file with exit 2, saying where, and applies none of it', async () => {
    const bad = file('bad.yaml', ROUTES_YAML.replace('pointer: /card/cvc', 'pointer: card/cvc'));
    const res = await run('apply', '--merchant', 'dev', '--file', bad);
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/bad\.yaml: routes\[0\]\.filters\[1\]\.pointer: A JSON pointer/);
    expect((await run('list', '--merchant', 'dev')).out).toBe('No routes for dev.');
  });

  it('dry-runs a sample without printing the card number, and deletes a route', async () => {
    await run('apply', '--merchant', 'dev', '--file', file('routes.yaml', ROUTES_YAML));
    const sample = file(
      'sample.json',
      JSON.stringify({ card: { number: '4242424242424242', cvc: '123' }, memo: 'spare 5555 5555 5555 4444' }),
    );
    const dry = await run('dry-run', '--merchant', 'dev', '--route', 'inbound-checkout', '--file', sample);
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(
      /^inbound-checkout \(inbound\): refused, 1 unmatched card number\(s\)\n {2}filter 0 number: 424242\*{6}4242 -> 424242X{6}4242/,
    );
    expect(dry.out).not.toMatch(/4242424242424242|5555 5555 5555 4444/);

    expect((await run('delete', '--merchant', 'dev', '--route', 'stripe')).code).toBe(0);
    const again = await run('delete', '--merchant', 'dev', '--route', 'stripe');
    expect(again).toMatchObject({ code: 1 });
    expect(again.err).toMatch(/stripe: No such proxy route/);
  });

  it('exits 2 on a missing flag or an unknown command', async () => {
    expect((await run('apply', '--merchant', 'dev')).code).toBe(2);
    expect((await run('show', '--merchant', 'dev')).err).toMatch(/show needs --route/);
    expect((await run('frobnicate')).code).toBe(2);
  });
});
