import { Redis } from 'ioredis';
import { hashApiKey, RedisApiKeyStore } from '@tessera/merchant-data';
import { startRedisServer, type RedisServer } from '@tessera/test-support';
import { parseRotationDelay, runKeysCli } from './keys';

const PEPPER = 'cli-test-pepper-cli-test-pepper-0123456789';

async function run(argv: string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runKeysCli(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('keys CLI', () => {
  let server: RedisServer;
  let env: NodeJS.ProcessEnv;
  let redis: Redis;
  let store: RedisApiKeyStore;

  beforeAll(async () => {
    server = await startRedisServer();
    env = { REDIS_URL: server.url, API_KEY_PEPPER: PEPPER, NODE_ENV: 'test' };
    redis = new Redis(server.url);
    store = new RedisApiKeyStore(redis);
  });
  afterAll(async () => {
    await store.close();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.flushall();
  });

  it('exits 2 without REDIS_URL, saying to point it at the gateway’s Redis', async () => {
    const res = await run(['list'], { API_KEY_PEPPER: PEPPER, NODE_ENV: 'development' });
    expect(res.code).toBe(2);
    expect(res.err.join('\n')).toMatch(/REDIS_URL is not set.*the gateway's Redis/s);
  });

  it('creates a key, prints exactly one JSON line with --json, and stores only its digest', async () => {
    const res = await run(
      ['create', '--merchant', 'shop_1', '--mode', 'live', '--allow-ip', '203.0.113.7', '--allow-ip', '2001:db8::/32', '--json'],
      env,
    );
    expect(res.code).toBe(0);
    expect(res.out).toHaveLength(1);
    const created = JSON.parse(res.out[0] ?? '');
    expect(Object.keys(created)).toEqual(['apiKey', 'id', 'merchantId', 'mode', 'allowedCidrs', 'allowedDomains', 'createdAt']);
    expect(created).toMatchObject({
      apiKey: expect.stringMatching(/^tsk_live_[0-9A-Za-z]{38}$/),
      merchantId: 'shop_1',
      mode: 'live',
      allowedCidrs: ['203.0.113.7/32', '2001:db8::/32'],
    });
    const stored = await store.findByDigest(hashApiKey(PEPPER, created.apiKey));
    expect(stored?.id).toBe(created.id);
  });

  it('prints the key once in human mode', async () => {
    const res = await run(['create', '--merchant', 'shop_1', '--mode', 'test'], env);
    expect(res.code).toBe(0);
    expect(res.out.filter((l) => /tsk_test_[0-9A-Za-z]{32}/.test(l))).toHaveLength(1);
  });

  it('lists keys by prefix and last four only, never the key', async () => {
    const created = JSON.parse((await run(['create', '--merchant', 'shop_1', '--mode', 'test', '--json'], env)).out[0] ?? '');
    const json = await run(['list', '--json'], env);
    expect(json.code).toBe(0);
    const [entry] = JSON.parse(json.out[0] ?? '[]');
    expect(entry).toMatchObject({
      id: created.id,
      merchantId: 'shop_1',
      mode: 'test',
      revokedAt: null,
      key: `${created.apiKey.slice(0, 13)}...${created.apiKey.slice(-4)}`,
    });
    const table = await run(['list'], env);
    const all = [...json.out, ...table.out].join('\n');
    expect(all).toContain(created.id);
    expect(all).not.toContain(created.apiKey);
    expect(all).not.toContain(created.apiKey.slice(13, -4));
  });

  it('revokes a key by id, and reports an unknown id with exit 1', async () => {
    const created = JSON.parse((await run(['create', '--merchant', 'shop_1', '--mode', 'test', '--json'], env)).out[0] ?? '');
    expect((await run(['revoke', created.id], env)).code).toBe(0);
    expect((await store.get(created.id))?.revokedAt).toEqual(expect.any(String));
    const unknown = await run(['revoke', 'key_nope'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.err.join('\n')).toContain('no API key with id key_nope');
  });

  it.each([
    [['create', '--mode', 'test']],
    [['create', '--merchant', 'm', '--mode', 'prod']],
    [['create', '--merchant', 'bad merchant', '--mode', 'test']],
    [['create', '--merchant', 'm', '--mode', 'test', '--allow-ip', '10.0.0.0/33']],
    [['revoke']],
    [['frobnicate']],
    [['list', '--bogus']],
  ])('rejects the usage %j with exit 2 and writes nothing', async (argv) => {
    const res = await run(argv, env);
    expect(res.code).toBe(2);
    expect(res.err.join('\n').length).toBeGreaterThan(0);
    expect(await store.list()).toEqual([]);
  });

  it('explains a malformed --allow-ip clearly', async () => {
    const res = await run(['create', '--merchant', 'm', '--mode', 'test', '--allow-ip', '300.1.1.1'], env);
    expect(res.err[0]).toContain('--allow-ip "300.1.1.1" is not an IPv4/IPv6 address or CIDR');
  });

  describe('return-urls', () => {
    it('registers canonical return URLs, shows them, prints the signing secret of a mode, and clears them', async () => {
      const set = await run(
        ['return-urls', 'set', '--merchant', 'acme', 'HTTPS://Shop.example:443/done', 'https://shop.example/cancel'],
        env,
      );
      expect(set.code).toBe(0);
      expect(JSON.parse((await redis.get('tessera:merchant-settings:{m:acme}')) ?? '{}').returnUrls).toEqual([
        'https://shop.example/done',
        'https://shop.example/cancel',
      ]);
      const shown = await run(['return-urls', 'show', '--merchant', 'acme', '--json'], env);
      expect(JSON.parse(shown.out.join(''))).toEqual({
        merchantId: 'acme',
        returnUrls: ['https://shop.example/done', 'https://shop.example/cancel'],
      });
      const test = (await run(['return-urls', 'secret', '--merchant', 'acme', '--mode', 'test'], env)).out.join('');
      const live = (await run(['return-urls', 'secret', '--merchant', 'acme', '--mode', 'live'], env)).out.join('');
      expect(test).toMatch(/^fss_test_[A-Za-z0-9_-]{43}$/);
      expect(live).toMatch(/^fss_live_/);
      expect((await run(['return-urls', 'clear', '--merchant', 'acme'], env)).code).toBe(0);
      expect((await run(['return-urls', 'show', '--merchant', 'acme'], env)).out.join('\n')).toMatch(/none/);
      const audit = (await redis.lrange('{tessera-gateway}:tessera:audit:merchant:acme', 0, -1)).map(
        (l) => JSON.parse(l) as { action: string },
      );
      expect(audit.map((e) => e.action).sort()).toEqual([
        'merchant.form_signing_secret_shown',
        'merchant.form_signing_secret_shown',
        'merchant.return_urls_updated',
        'merchant.return_urls_updated',
      ]);
    });

    it.each([
      [['return-urls', 'set', '--merchant', 'acme', 'https://shop.example/done?x=1'], /must not contain a query/],
      [['return-urls', 'set', '--merchant', 'acme', 'https://user@shop.example/done'], /credentials/],
      [['return-urls', 'set', '--merchant', 'acme', '//shop.example/done'], /absolute http/],
      [['return-urls', 'set', '--merchant', 'acme'], /at least one URL/],
      [['return-urls', 'secret', '--merchant', 'acme'], /--mode test or --mode live/],
    ])('refuses %j with exit 2 and the reason, writing nothing', async (argv, reason) => {
      const res = await run(argv, env);
      expect(res.code).toBe(2);
      expect(res.err.join('\n')).toMatch(reason);
      expect(await redis.get('tessera:merchant-settings:{m:acme}')).toBeNull();
    });
  });

  describe('psp-hosts', () => {
    it('sets a canonical, de-duplicated list in Redis, shows it, and clears it', async () => {
      const set = await run(['psp-hosts', 'set', '--merchant', 'acme', 'API.stripe.com', '*.adyen.com', 'api.stripe.com', '[::1]'], env);
      expect(set.code).toBe(0);
      expect(JSON.parse((await redis.get('tessera:merchant-settings:{m:acme}')) ?? '{}').pspHosts).toEqual([
        'api.stripe.com',
        '*.adyen.com',
        '::1',
      ]);
      const shown = await run(['psp-hosts', 'show', '--merchant', 'acme', '--json'], env);
      expect(JSON.parse(shown.out.join(''))).toEqual({ merchantId: 'acme', pspHosts: ['api.stripe.com', '*.adyen.com', '::1'] });
      expect((await run(['psp-hosts', 'clear', '--merchant', 'acme'], env)).code).toBe(0);
      expect((await run(['psp-hosts', 'show', '--merchant', 'acme'], env)).out.join('\n')).toMatch(/any public host/);
      const audit = (await redis.lrange('{tessera-gateway}:tessera:audit:merchant:acme', 0, -1)).map(
        (l) => JSON.parse(l) as { action: string },
      );
      expect(audit.map((e) => e.action)).toEqual(['merchant.psp_hosts_updated', 'merchant.psp_hosts_updated']);
    });

    it.each([
      [['psp-hosts', 'set', '--merchant', 'acme', 'https://api.stripe.com/v1'], /without scheme, port or path/],
      [['psp-hosts', 'set', '--merchant', 'acme', 'a.*.example.com'], /only as the whole first label/],
      [['psp-hosts', 'set', '--merchant', 'acme'], /at least one host/],
      [['psp-hosts', 'set', 'api.stripe.com'], /needs --merchant/],
      [['psp-hosts', 'list', '--merchant', 'acme'], /set, show or clear/],
    ])('refuses %j with exit 2 and the reason, writing nothing', async (argv, reason) => {
      const res = await run(argv, env);
      expect(res.code).toBe(2);
      expect(res.err.join('\n')).toMatch(reason);
      expect(await redis.keys('tessera:merchant-settings:*')).toEqual([]);
    });
  });

  it('exits 1 with a clear message when Redis cannot be reached', async () => {
    const res = await run(['list'], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(res.code).toBe(1);
    expect(res.err.join('\n')).toContain('cannot connect to Redis');
  });

  describe('restrictions and the audit log', () => {
    const create = async (extra: string[] = []) =>
      JSON.parse((await run(['create', '--merchant', 'shop_1', '--mode', 'test', '--json', ...extra], env)).out[0] ?? '');

    it('creates a key restricted to domains, stored in canonical form', async () => {
      const created = await create(['--allow-domain', '*.Shop.Example', '--allow-domain', 'pay.example.org']);
      expect(created.allowedDomains).toEqual(['*.shop.example', 'pay.example.org']);
      expect((await store.get(created.id))?.allowedDomains).toEqual(['*.shop.example', 'pay.example.org']);
    });

    it('refuses an invalid domain with exit 2 and the reason', async () => {
      const res = await run(['create', '--merchant', 'shop_1', '--mode', 'test', '--allow-domain', 'https://shop.example'], env);
      expect(res.code).toBe(2);
      expect(res.err.join('\n')).toMatch(/--allow-domain "https:\/\/shop\.example" must be a host name only/);
    });

    it('replaces only the lists it is given, and clears one with --any-ip', async () => {
      const created = await create(['--allow-ip', '10.0.0.0/8', '--allow-domain', 'shop.example']);
      expect((await run(['restrict', created.id, '--allow-ip', '203.0.113.9/24'], env)).code).toBe(0);
      expect(await store.get(created.id)).toMatchObject({ allowedCidrs: ['203.0.113.0/24'], allowedDomains: ['shop.example'] });
      expect((await run(['restrict', created.id, '--any-ip', '--any-domain'], env)).code).toBe(0);
      expect(await store.get(created.id)).toMatchObject({ allowedCidrs: [], allowedDomains: [] });
    });

    it.each<[string, string[]]>([
      ['no list at all', []],
      ['both --allow-ip and --any-ip', ['--allow-ip', '10.0.0.1', '--any-ip']],
      ['a bad range', ['--allow-ip', '10.0.0.0/40']],
    ])('exits 2 for restrict with %s', async (_label, extra) => {
      expect((await run(['restrict', 'key_x', ...extra], env)).code).toBe(2);
    });

    it('exits 1 for an unknown or revoked key', async () => {
      expect((await run(['restrict', 'key_missing', '--any-ip'], env)).code).toBe(1);
      const created = await create();
      await run(['revoke', created.id], env);
      const res = await run(['restrict', created.id, '--any-ip'], env);
      expect(res.code).toBe(1);
      expect(res.err.join('\n')).toMatch(/revoked/);
    });

    it('records create, restrict and revoke in the audit log, attributed to the CLI, without the key', async () => {
      const created = await create();
      await run(['restrict', created.id, '--allow-ip', '203.0.113.0/24'], env);
      await run(['revoke', created.id], env);
      const entries = (await redis.lrange('{tessera-gateway}:tessera:audit', 0, -1)).map((l) => JSON.parse(l));
      expect(entries.map((e) => e.action)).toEqual(['key.revoked', 'key.updated', 'key.created']);
      for (const e of entries) expect(e).toMatchObject({ keyId: created.id, merchantId: 'shop_1', actor: expect.stringMatching(/^cli:/) });
      expect(await redis.llen('{tessera-gateway}:tessera:audit:merchant:shop_1')).toBe(3);
      expect(JSON.stringify(entries)).not.toContain(created.apiKey);
    });
  });

  describe('publishable keys', () => {
    it('creates a tpk_ key with --kind publishable and its canonical origins, shown by list and show', async () => {
      const res = await run(
        ['create', '--kind', 'publishable', '--merchant', 'shop_1', '--mode', 'test', '--origin', 'https://shop.example', '--json'],
        env,
      );
      expect(res.code).toBe(0);
      const created = JSON.parse(res.out[0] ?? '');
      expect(created).toMatchObject({
        apiKey: expect.stringMatching(/^tpk_test_[0-9A-Za-z]{38}$/),
        kind: 'publishable',
        allowedOrigins: ['https://shop.example'],
      });
      expect(await store.get(created.id)).toMatchObject({ kind: 'publishable', allowedOrigins: ['https://shop.example'] });
      const [listed] = JSON.parse((await run(['list', '--json'], env)).out[0] ?? '[]');
      expect(listed).toMatchObject({ id: created.id, kind: 'publishable', allowedOrigins: ['https://shop.example'] });
      const shown = await run(['show', created.id], env);
      expect(shown.code).toBe(0);
      expect(shown.out.join('\n')).toContain('Allowed origins: https://shop.example');
      expect(shown.out.join('\n')).not.toContain(created.apiKey);
    });

    it.each<[string, string[], RegExp]>([
      ['no origin', [], /at least one allowed origin/],
      ['an IP allowlist', ['--origin', 'https://shop.example', '--allow-ip', '203.0.113.7'], /IP restrictions do not apply/],
      ['a path in an origin', ['--origin', 'https://shop.example/pay'], /--origin "https:\/\/shop\.example\/pay"/],
      [
        'an origin not written canonically',
        ['--origin', 'https://Shop.Example/'],
        /--origin "https:\/\/Shop\.Example\/" is not written canonically: write it as "https:\/\/shop\.example"/,
      ],
    ])('refuses a publishable key with %s (exit 2, nothing written)', async (_label, extra, reason) => {
      const res = await run(['create', '--kind', 'publishable', '--merchant', 'shop_1', '--mode', 'test', ...extra], env);
      expect(res.code).toBe(2);
      expect(res.err.join('\n')).toMatch(reason);
      expect(await store.list()).toEqual([]);
    });

    it("replaces a publishable key's origins with restrict --origin, and refuses --origin on a secret key", async () => {
      const pk = JSON.parse(
        (
          await run(
            ['create', '--kind', 'publishable', '--merchant', 'shop_1', '--mode', 'live', '--origin', 'https://a.example', '--json'],
            env,
          )
        ).out[0] ?? '',
      );
      expect((await run(['restrict', pk.id, '--origin', 'https://b.example'], env)).code).toBe(0);
      expect((await store.get(pk.id))?.allowedOrigins).toEqual(['https://b.example']);
      const plain = await run(['restrict', pk.id, '--origin', 'http://b.example'], env);
      expect(plain.code).toBe(1);
      expect(plain.err.join('\n')).toMatch(/https origins only/);
      const sk = JSON.parse((await run(['create', '--merchant', 'shop_1', '--mode', 'test', '--json'], env)).out[0] ?? '');
      const res = await run(['restrict', sk.id, '--origin', 'https://b.example'], env);
      expect(res.code).toBe(1);
      expect(res.err.join('\n')).toMatch(/Allowed origins apply to publishable keys/);
    });
  });

  describe('revoke --after (overlapping rotation)', () => {
    const createKey = async () =>
      JSON.parse((await run(['create', '--merchant', 'shop_1', '--mode', 'test', '--json'], env)).out[0] ?? '') as {
        id: string;
        apiKey: string;
      };

    it('schedules the expiry instead of revoking, shows it in list, and audits it', async () => {
      const created = await createKey();
      const before = Date.now();
      const res = await run(['revoke', created.id, '--after', '24h'], env);
      expect(res.code).toBe(0);
      const stored = await store.get(created.id);
      expect(stored?.revokedAt).toBeUndefined();
      const expiresAt = Date.parse(stored?.expiresAt ?? '');
      expect(expiresAt).toBeGreaterThanOrEqual(before + 24 * 3_600_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 24 * 3_600_000);
      expect(res.out.join('\n')).toContain(`works until ${stored?.expiresAt}`);

      const [entry] = JSON.parse((await run(['list', '--json'], env)).out[0] ?? '[]');
      expect(entry).toMatchObject({ id: created.id, revokedAt: null, expiresAt: stored?.expiresAt });
      expect((await run(['list'], env)).out.join('\n')).toContain(`active, expires ${stored?.expiresAt}`);
      const [audit] = (await redis.lrange('{tessera-gateway}:tessera:audit', 0, 0)).map((l) => JSON.parse(l));
      expect(audit).toMatchObject({ action: 'key.expiry_scheduled', keyId: created.id, details: { expiresAt: stored?.expiresAt } });
    });

    it('never postpones an expiry already set', async () => {
      const created = await createKey();
      await run(['revoke', created.id, '--after', '1h'], env);
      const first = (await store.get(created.id))?.expiresAt;
      const res = await run(['revoke', created.id, '--after', '7d'], env);
      expect(res.code).toBe(0);
      expect(res.out.join('\n')).toContain('already expires earlier');
      expect((await store.get(created.id))?.expiresAt).toBe(first);
    });

    it('refuses to schedule the expiry of a revoked key (exit 1)', async () => {
      const created = await createKey();
      await run(['revoke', created.id], env);
      expect((await run(['revoke', created.id, '--after', '1h'], env)).code).toBe(1);
    });

    it.each(['0h', '24', 'h', '-1h', '1w', '367d', '1.5h'])('exits 2 for --after %s', async (after) => {
      expect((await run(['revoke', 'key_x', '--after', after], env)).code).toBe(2);
    });

    it('reads durations in seconds, minutes, hours and days', () => {
      expect(parseRotationDelay('90s')).toBe(90_000);
      expect(parseRotationDelay('30m')).toBe(1_800_000);
      expect(parseRotationDelay('24h')).toBe(86_400_000);
      expect(parseRotationDelay('7d')).toBe(604_800_000);
      expect(parseRotationDelay('366d')).toBe(366 * 86_400_000);
    });
  });
});
