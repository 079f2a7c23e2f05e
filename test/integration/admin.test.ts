import { AdminClient, loggedIn } from './adminClient';
import { aCard, apiClient, useStack } from './harness';

jest.setTimeout(90_000);

const env = useStack({ env: { TRUSTED_PROXIES: '127.0.0.1/32', ADMIN_LOGIN_MAX_PER_ACCOUNT: '3', ADMIN_LOGIN_MAX_PER_IP: '6' } });

const PLATFORM = { email: 'platform@tessera.test', password: 'platform-password-1' };
const ACME = { email: 'ops@acme.test', password: 'acme-password-12' };
const GLOBEX = { email: 'ops@globex.test', password: 'globex-password-1' };

const issuedKeys: string[] = [];
const sessionCookies: string[] = [];
let ipCounter = 10;

/** Each test logs in from its own address, so the per-IP login limit of one test never hits another. */
function nextIp(): string {
  ipCounter++;
  return `198.18.0.${ipCounter}`;
}

async function as(op: { email: string; password: string }): Promise<AdminClient> {
  const client = await loggedIn(env.stack.adminUrl, op.email, op.password, nextIp());
  if (client.cookie) sessionCookies.push(client.cookie);
  return client;
}

/** A /v1 request as if from `ip` (the gateway trusts 127.0.0.1 as a proxy in this stack). */
function tokenize(apiKey: string, ip: string, headers: Record<string, string> = {}) {
  return apiClient(env.stack, apiKey)('POST', '/v1/token', aCard(), { 'x-forwarded-for': ip, ...headers });
}

async function createKey(client: AdminClient, body: Record<string, unknown>) {
  const res = await client.call('POST', '/keys', body);
  expect(res.status).toBe(201);
  issuedKeys.push(res.body.apiKey);
  return res.body as { apiKey: string; key: { id: string; key: string } };
}

beforeAll(async () => {
  env.stack.createOperator(PLATFORM.email, PLATFORM.password, null);
  env.stack.createOperator(ACME.email, ACME.password, 'acme');
  env.stack.createOperator(GLOBEX.email, GLOBEX.password, 'globex');
});

describe('admin authentication', () => {
  it('refuses the admin API without a session, even with a valid merchant API key', async () => {
    const merchantKey = env.stack.createKey('acme');
    issuedKeys.push(merchantKey.apiKey);
    const res = await fetch(`${env.stack.adminUrl}/admin/v1/keys`, { headers: { 'x-api-key': merchantKey.apiKey } });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-tessera-error')).toBe('admin_session_required');
  });

  it('logs in with an HttpOnly, Secure, SameSite=Strict session cookie scoped to /admin and returns a CSRF token', async () => {
    const client = new AdminClient(env.stack.adminUrl, nextIp());
    const res = await client.login(ACME.email.toUpperCase(), ACME.password);
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^tessera_admin=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('Secure');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/admin');
    expect(res.body).toMatchObject({ operator: { email: ACME.email, merchantId: 'acme' }, csrfToken: expect.any(String) });
    expect((await client.call('GET', '/session')).status).toBe(200);
  });

  it('answers a wrong password and an unknown email alike with 401 login_failed', async () => {
    const client = new AdminClient(env.stack.adminUrl, nextIp());
    const wrong = await client.login(GLOBEX.email, 'not-the-password');
    const unknown = await client.login('nobody@nowhere.test', 'not-the-password');
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('login_failed');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('limits failed logins per account with 429 and Retry-After, even for the right password', async () => {
    const account = { email: 'throttled@acme.test', password: 'throttled-password' };
    env.stack.createOperator(account.email, account.password, 'acme');
    // Each attempt from another address: the account limit (3) must trip, not the per-IP one.
    for (let i = 0; i < 3; i++)
      expect((await new AdminClient(env.stack.adminUrl, nextIp()).login(account.email, 'wrong-password')).status).toBe(401);
    const blocked = await new AdminClient(env.stack.adminUrl, nextIp()).login(account.email, account.password);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('limits login attempts per client address with 429 and Retry-After', async () => {
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await new AdminClient(env.stack.adminUrl, ip).login(`guess${i}@acme.test`, 'whatever-it-is')).status);
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(statuses[6]).toBe(429);
  });

  it('ends the session on logout', async () => {
    const client = await as(GLOBEX);
    const cookie = client.cookie;
    expect((await client.call('POST', '/logout')).status).toBe(204);
    const after = await client.call('GET', '/session', undefined, { cookie: cookie ?? '' });
    expect(after.status).toBe(401);
  });

  it('ends the sessions of an operator who is disabled with the CLI', async () => {
    const account = { email: 'leaver@acme.test', password: 'leaver-password-1' };
    env.stack.createOperator(account.email, account.password, 'acme');
    const client = await as(account);
    expect((await client.call('GET', '/session')).status).toBe(200);
    env.stack.cli(['admin', 'disable', '--email', account.email]);
    expect((await client.call('GET', '/session')).status).toBe(401);
    expect((await new AdminClient(env.stack.adminUrl, nextIp()).login(account.email, account.password)).status).toBe(401);
  });
});

describe('CSRF protection', () => {
  it('refuses a change without the CSRF token, with a wrong one, or from another origin, and changes nothing', async () => {
    const client = await as(ACME);
    const before = (await client.call('GET', '/keys')).body.keys.length;
    const attempts = [
      await client.call('POST', '/keys', { mode: 'test' }, { 'x-csrf-token': '' }),
      await client.call('POST', '/keys', { mode: 'test' }, { 'x-csrf-token': 'x'.repeat(43) }),
      await client.call('POST', '/keys', { mode: 'test' }, { origin: 'https://evil.example' }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('csrf_token_invalid');
    }
    expect((await client.call('GET', '/keys')).body.keys.length).toBe(before);
  });

  it("refuses another session's CSRF token", async () => {
    const mine = await as(ACME);
    const other = await as(ACME);
    const res = await mine.call('POST', '/keys', { mode: 'test' }, { 'x-csrf-token': other.csrfToken ?? '' });
    expect(res.status).toBe(403);
  });
});

describe('keys', () => {
  it('creates a key that is shown once; lists show only its prefix and last four characters', async () => {
    const client = await as(ACME);
    const { apiKey, key } = await createKey(client, { mode: 'test' });
    expect(apiKey).toMatch(/^tsk_test_[A-Za-z0-9]{32}(?:[A-Za-z0-9]{6})?$/);
    expect(key.key).toBe(`${apiKey.slice(0, 13)}…${apiKey.slice(-4)}`);
    const list = await client.call('GET', '/keys');
    expect(list.text).not.toContain(apiKey);
    expect(list.text).not.toContain(apiKey.slice(13, -4));
    expect(list.body.keys.find((k: { id: string }) => k.id === key.id)).toMatchObject({
      status: 'active',
      mode: 'test',
      merchantId: 'acme',
    });
    expect((await tokenize(apiKey, '192.0.2.1')).status).toBe(201);
  });

  // One session for the validation cases below: each login costs the gateway a scrypt.
  let validating: Promise<AdminClient> | undefined;
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'a CIDR with a bad prefix length',
      { allowedCidrs: ['203.0.113.0/24', '203.0.113.0/33'] },
      'allowedCidrs[1]',
      /"203\.0\.113\.0\/33".*CIDR/,
    ],
    ['an IPv6 typo', { allowedCidrs: ['2001:db8::g/32'] }, 'allowedCidrs[0]', /IPv4\/IPv6/],
    ['a URL instead of a host name', { allowedDomains: ['https://shop.example.com/'] }, 'allowedDomains[0]', /host name only/],
    ['a wildcard in the middle', { allowedDomains: ['shop.*.example.com'] }, 'allowedDomains[0]', /\*/],
    ['a wildcard over a top-level domain', { allowedDomains: ['*.com'] }, 'allowedDomains[0]', /two labels/],
    ['an IP address as a domain', { allowedDomains: ['203.0.113.9'] }, 'allowedDomains[0]', /IP allowlist/],
    ['an unknown mode', { mode: 'prod' }, 'mode', /test.*live/],
    ['an unknown field', { allowedIps: ['203.0.113.0/24'] }, 'allowedIps', /Unknown/],
  ])('refuses %s with 400 naming the field', async (_label, extra, param, message) => {
    const client = await (validating ??= as(ACME));
    const res = await client.call('POST', '/keys', { mode: 'test', ...extra });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
    expect(res.body.error.message).toMatch(message);
  });

  it('applies a new IP allowlist from the next request: outside 401, inside 201', async () => {
    const client = await as(ACME);
    const { apiKey, key } = await createKey(client, { mode: 'test' });
    const edit = await client.call('PATCH', `/keys/${key.id}`, { allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] });
    expect(edit.status).toBe(200);
    expect(edit.body.key.allowedCidrs).toEqual(['203.0.113.0/24', '2001:db8::/32']);
    const outside = await tokenize(apiKey, '198.51.100.7');
    expect(outside.status).toBe(401);
    expect(outside.body.error.code).toBe('ip_not_allowed');
    expect((await tokenize(apiKey, '203.0.113.77')).status).toBe(201);
    expect((await tokenize(apiKey, '2001:db8::5')).status).toBe(201);
    const listed = (await client.call('GET', '/keys')).body.keys.find((k: { id: string }) => k.id === key.id);
    expect(listed.lastUsedIp).toBe('2001:db8::5');
  });

  it('accepts a domain-restricted key only from browser pages on those domains', async () => {
    const client = await as(ACME);
    const { apiKey, key } = await createKey(client, { mode: 'test', allowedDomains: ['*.Shop.Example', 'checkout.example.org'] });
    expect(key).toMatchObject({ allowedDomains: ['*.shop.example', 'checkout.example.org'] });
    expect((await tokenize(apiKey, '192.0.2.1', { origin: 'https://pay.shop.example' })).status).toBe(201);
    expect((await tokenize(apiKey, '192.0.2.1', { origin: 'https://checkout.example.org:8443' })).status).toBe(201);
    for (const origin of [
      'https://shop.example',
      'https://evilshop.example',
      'https://checkout.example.org.evil.test',
      // Spellings a URL parser repairs into an allowed origin: only the canonical one is (issue 22).
      'http://evil.test@pay.shop.example',
      'https://PAY.shop.example',
      'https://pay.shop.example.',
      'https://pay%2eshop.example',
      'https://checkout.example.org:08443',
      'https://.shop.example',
    ]) {
      const res = await tokenize(apiKey, '192.0.2.1', { origin });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('origin_not_allowed');
    }
    expect((await tokenize(apiKey, '192.0.2.1')).status).toBe(401);
  });

  it('keeps a revoked key revoked and refuses to edit it', async () => {
    const client = await as(ACME);
    const { apiKey, key } = await createKey(client, { mode: 'test' });
    const revoked = await client.call('POST', `/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.key.status).toBe('revoked');
    expect((await client.call('PATCH', `/keys/${key.id}`, { allowedCidrs: [] })).status).toBe(400);
    const res = await tokenize(apiKey, '192.0.2.1');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('api_key_invalid');
  });

  it('revocation in the dashboard is refused by another gateway replica on its very next request', async () => {
    const replica = await env.stack.startGatewayReplica();
    const client = await as(ACME);
    const { apiKey, key } = await createKey(client, { mode: 'test' });
    const onReplica = () =>
      fetch(`${replica.baseUrl}/v1/token`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(aCard()),
      });
    expect((await onReplica()).status).toBe(201);
    expect((await client.call('POST', `/keys/${key.id}/revoke`)).status).toBe(200);
    expect((await onReplica()).status).toBe(401);
    await replica.process.stop();
  });

  it('tests a key with the gateway’s own decision, from a given address', async () => {
    const client = await as(ACME);
    const { apiKey, key } = await createKey(client, { mode: 'test', allowedCidrs: ['203.0.113.0/24'] });
    const inside = await client.call('POST', '/keys/test', { apiKey, clientIp: '203.0.113.9' });
    expect(inside.body).toMatchObject({ accepted: true, status: 200, code: null, key: { id: key.id } });
    const outside = await client.call('POST', '/keys/test', { apiKey, clientIp: '198.51.100.1' });
    expect(outside.body).toMatchObject({ accepted: false, status: 401, code: 'ip_not_allowed' });
    const bogus = await client.call('POST', '/keys/test', { apiKey: 'tsk_test_' + 'A'.repeat(32) });
    expect(bogus.body).toMatchObject({ accepted: false, code: 'api_key_invalid', key: null });
    expect((await client.call('POST', '/keys/test', { apiKey, clientIp: '203.0.113.0/24' })).status).toBe(400);
  });
});

describe('merchant scope', () => {
  it('lets a merchant operator see and change only its own merchant', async () => {
    const globex = await as(GLOBEX);
    const { apiKey: globexKey, key: globexRecord } = await createKey(globex, { mode: 'test' });
    const acme = await as(ACME);
    expect((await acme.call('GET', '/merchants')).body).toEqual({ merchants: ['acme'] });
    expect((await acme.call('GET', '/keys?merchantId=globex')).status).toBe(403);
    expect((await acme.call('POST', '/keys', { merchantId: 'globex', mode: 'test' })).status).toBe(403);
    expect((await acme.call('PATCH', `/keys/${globexRecord.id}`, { allowedCidrs: ['10.0.0.0/8'] })).status).toBe(404);
    expect((await acme.call('POST', `/keys/${globexRecord.id}/revoke`)).status).toBe(404);
    expect((await acme.call('POST', '/keys/test', { apiKey: globexKey })).body).toMatchObject({ accepted: false, key: null });
    const keys = (await acme.call('GET', '/keys')).body.keys as { merchantId: string }[];
    expect(keys.every((k) => k.merchantId === 'acme')).toBe(true);
    const audit = (await acme.call('GET', '/audit')).body.entries as { merchantId: string }[];
    expect(audit.length).toBeGreaterThan(0);
    expect(audit.every((e) => e.merchantId === 'acme')).toBe(true);
    expect((await acme.call('GET', '/audit?merchantId=globex')).status).toBe(403);
    expect((await globex.call('POST', `/keys/${globexRecord.id}/revoke`)).status).toBe(200);
  });

  it('lets a platform operator manage any merchant, including a new one', async () => {
    const platform = await as(PLATFORM);
    const { key } = await createKey(platform, { merchantId: 'initech', mode: 'live', allowedCidrs: ['192.0.2.0/24'] });
    expect(key).toMatchObject({ merchantId: 'initech', mode: 'live' });
    expect((await platform.call('GET', '/merchants')).body.merchants).toEqual(expect.arrayContaining(['acme', 'globex', 'initech']));
    expect((await platform.call('POST', '/keys', { mode: 'test' })).body.error.param).toBe('merchantId');
  });
});

describe('audit log', () => {
  it('records logins and key changes with who, when and from which address, and never key material', async () => {
    const ip = nextIp();
    const client = await loggedIn(env.stack.adminUrl, ACME.email, ACME.password, ip);
    const { apiKey, key } = await createKey(client, { mode: 'test' });
    await client.call('PATCH', `/keys/${key.id}`, { allowedCidrs: ['203.0.113.0/24'] });
    await client.call('POST', `/keys/${key.id}/revoke`);
    await new AdminClient(env.stack.adminUrl, ip).login(ACME.email, 'wrong-password-here');

    const { entries } = (await client.call('GET', '/audit?limit=20')).body;
    const mine = entries.filter((e: { ip: string }) => e.ip === ip);
    expect(mine.map((e: { action: string }) => e.action)).toEqual([
      'login.failed',
      'key.revoked',
      'key.updated',
      'key.created',
      'login.succeeded',
    ]);
    for (const entry of mine) {
      expect(entry).toMatchObject({ actor: ACME.email, merchantId: 'acme', ip });
      expect(Date.now() - Date.parse(entry.at)).toBeLessThan(60_000);
    }
    expect(mine.find((e: { action: string }) => e.action === 'key.updated')).toMatchObject({
      keyId: key.id,
      details: { allowedCidrs: ['203.0.113.0/24'], previousAllowedCidrs: [] },
    });
    const text = JSON.stringify(entries);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(apiKey.slice(9));
    expect(text).not.toContain('wrong-password-here');
    expect(text).not.toContain(ACME.password);
  });

  it('does not echo the typed email of a failed login to an unknown account', async () => {
    const platform = await as(PLATFORM);
    await new AdminClient(env.stack.adminUrl, nextIp()).login('typed-a-secret-here@nowhere.test', 'some-password-1');
    const { entries } = (await platform.call('GET', '/audit?limit=5')).body;
    expect(entries[0]).toMatchObject({ action: 'login.failed', actor: null, details: { reason: 'unknown_account' } });
    expect(JSON.stringify(entries)).not.toContain('typed-a-secret-here');
  });
});

describe('dashboard page on the admin service', () => {
  it('serves the dashboard with a strict content security policy', async () => {
    const redirect = await fetch(`${env.stack.adminUrl}/dashboard`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/dashboard/');
    const page = await fetch(`${env.stack.adminUrl}/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(await page.text()).toContain('<label for="login-email">');
    expect((await fetch(`${env.stack.adminUrl}/dashboard/dashboard.js`)).headers.get('content-type')).toMatch(/javascript/);
  });

  it('serves admin API and dashboard on the admin service only: the gateway answers 404 for them', async () => {
    const admin = env.stack.adminUrl;
    expect((await fetch(`${env.stack.baseUrl}/dashboard/`)).status).toBe(404);
    expect((await fetch(`${env.stack.baseUrl}/admin/v1/session`)).status).toBe(404);
    expect((await fetch(`${admin}/dashboard/`)).status).toBe(200);
    expect((await fetch(`${admin}/admin/v1/session`)).status).toBe(401);
    expect((await fetch(`${admin}/v1/token/tok.x`)).status).toBe(404);
    expect((await loggedIn(admin, ACME.email, ACME.password, nextIp())).csrfToken).toBeDefined();
    expect((await fetch(`${env.stack.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${admin}/healthz`)).status).toBe(200);
  });
});

describe('logs', () => {
  it('never contain an API key, a password, a session cookie or a CSRF token', () => {
    const logs = env.stack.logs();
    for (const apiKey of issuedKeys) expect(logs).not.toContain(apiKey.slice(9));
    for (const password of [PLATFORM.password, ACME.password, GLOBEX.password, 'wrong-password-here']) expect(logs).not.toContain(password);
    for (const cookie of sessionCookies) expect(logs).not.toContain(cookie.split('=')[1]);
  });
});
