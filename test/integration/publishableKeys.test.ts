import { loggedIn, type AdminClient } from './adminClient';
import { aCard, apiClient, useSharedStack } from './harness';

jest.setTimeout(90_000);

const env = useSharedStack();
const acmeId = env.merchant('acme');
const OPERATOR = { email: `ops@${acmeId}.test`, password: 'acme-password-12' };

interface CliKey {
  apiKey: string;
  id: string;
}

function createPublishableKey(origins: string[]): CliKey {
  const out = env.stack.cli([
    'create',
    '--kind',
    'publishable',
    '--merchant',
    acmeId,
    '--mode',
    'test',
    '--json',
    ...origins.flatMap((o) => ['--origin', o]),
  ]);
  return JSON.parse(out.trim().split('\n').pop() ?? '') as CliKey;
}

let admin: AdminClient;
let secret: CliKey;
let publishable: CliKey;
let token: string;

beforeAll(async () => {
  env.stack.createOperator(OPERATOR.email, OPERATOR.password, acmeId);
  admin = await loggedIn(env.stack.adminUrl, OPERATOR.email, OPERATOR.password);
  secret = env.stack.createKey(acmeId, 'test');
  publishable = createPublishableKey(['https://shop.example']);
  const created = await apiClient(env.stack, secret.apiKey)('POST', '/v1/token', aCard());
  expect(created.status).toBe(201);
  token = created.body.token;
});

const proxyBody = () => ({
  method: 'post',
  token,
  pspUrl: 'https://psp.example/charge',
  pspHeaders: { 'content-type': 'application/json' },
  pspBody: '{"number":"[CARD_NUMBER]"}',
});

describe('a publishable key on the server routes', () => {
  it.each<[string, string, () => string, (() => unknown) | undefined]>([
    ['POST', '/v1/proxy', () => '/v1/proxy', proxyBody],
    ['POST', '/v1/proxy/dry-run', () => '/v1/proxy/dry-run', proxyBody],
    ['GET', '/v1/token/{token}', () => `/v1/token/${token}`, undefined],
    ['DELETE', '/v1/token/{token}', () => `/v1/token/${token}`, undefined],
    ['POST', '/v1/token', () => '/v1/token', () => aCard()],
    ['POST', '/v1/token/{token}/retain', () => `/v1/token/${token}/retain`, undefined],
  ])('gets 403 publishable_key_forbidden on %s %s, with or without an allowed Origin', async (method, _route, route, body) => {
    for (const headers of [{}, { origin: 'https://shop.example' }] as Array<Record<string, string>>) {
      const res = await apiClient(env.stack, publishable.apiKey)(method, route(), body?.(), headers);
      expect(res.status).toBe(403);
      expect(res.headers.get('x-tessera-error')).toBe('publishable_key_forbidden');
      expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'publishable_key_forbidden' });
    }
    // Nothing happened on the way: the token made with the secret key is still there.
    expect((await apiClient(env.stack, secret.apiKey)('GET', `/v1/token/${token}`)).status).toBe(200);
  });

  it('gets 401 origin_not_allowed when the request names an Origin the key does not allow', async () => {
    for (const origin of ['https://evil.example', 'http://shop.example', 'https://shop.example:8443']) {
      const res = await apiClient(env.stack, publishable.apiKey)('POST', '/v1/token', aCard(), { origin });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('origin_not_allowed');
    }
  });

  it("leaves the merchant's secret key working on the same routes", async () => {
    const res = await apiClient(env.stack, secret.apiKey)('POST', '/v1/proxy/dry-run', proxyBody());
    expect(res.status).toBe(200);
  });
});

describe('publishable keys in the admin API', () => {
  it.each<[string, Record<string, unknown>, number, string]>([
    ['without an origin', { kind: 'publishable', mode: 'test' }, 400, 'allowedOrigins'],
    ['with an empty origin list', { kind: 'publishable', mode: 'test', allowedOrigins: [] }, 400, 'allowedOrigins'],
    [
      'with an IP allowlist',
      { kind: 'publishable', mode: 'test', allowedOrigins: ['https://shop.example'], allowedCidrs: ['203.0.113.0/24'] },
      400,
      'allowedCidrs',
    ],
    [
      'with an origin that has a path',
      { kind: 'publishable', mode: 'test', allowedOrigins: ['https://shop.example/pay'] },
      400,
      'allowedOrigins[0]',
    ],
  ])('cannot be created %s', async (_label, body, status, param) => {
    const before = (await admin.call('GET', '/keys')).body.keys.length;
    const res = await admin.call('POST', '/keys', body);
    expect(res.status).toBe(status);
    expect(res.body.error.param).toBe(param);
    expect((await admin.call('GET', '/keys')).body.keys).toHaveLength(before);
  });

  it('are created with a kind and origins, listed, restricted and revoked like secret keys', async () => {
    // Stored exactly as written: a spelling that is not the canonical one is refused, with the canonical one to use.
    const loose = await admin.call('POST', '/keys', { kind: 'publishable', mode: 'test', allowedOrigins: ['https://*.Shop.Example/'] });
    expect(loose.status).toBe(400);
    expect(loose.body.error).toMatchObject({ code: 'parameter_invalid', param: 'allowedOrigins[0]' });
    expect(loose.body.error.message).toContain('write it as "https://*.shop.example"');
    const created = await admin.call('POST', '/keys', { kind: 'publishable', mode: 'test', allowedOrigins: ['https://*.shop.example'] });
    expect(created.status).toBe(201);
    const { apiKey, key } = created.body;
    expect(apiKey).toMatch(/^tpk_test_[0-9A-Za-z]{38}$/);
    expect(key).toMatchObject({ kind: 'publishable', allowedOrigins: ['https://*.shop.example'], allowedCidrs: [] });
    const listed = (await admin.call('GET', '/keys')).body.keys.find((k: { id: string }) => k.id === key.id);
    expect(listed).toMatchObject({ kind: 'publishable', key: `${apiKey.slice(0, 13)}…${apiKey.slice(-4)}` });
    expect((await admin.call('GET', '/keys')).text).not.toContain(apiKey);

    const edit = await admin.call('PATCH', `/keys/${key.id}`, { allowedOrigins: ['https://checkout.example'] });
    expect(edit.status).toBe(200);
    expect(edit.body.key.allowedOrigins).toEqual(['https://checkout.example']);
    const origin = (o: string) => apiClient(env.stack, apiKey)('GET', `/v1/token/${token}`, undefined, { origin: o });
    expect((await origin('https://a.shop.example')).body.error.code).toBe('origin_not_allowed');
    // Only the canonical spelling of an allowed origin is that origin.
    for (const spelling of [
      'https://CHECKOUT.example',
      'https://checkout.example.',
      'https://x@checkout.example',
      'https://checkout.example:443',
    ]) {
      expect((await origin(spelling)).body.error.code).toBe('origin_not_allowed');
    }
    expect((await origin('https://checkout.example')).body.error.code).toBe('publishable_key_forbidden');
    expect((await admin.call('PATCH', `/keys/${key.id}`, { allowedCidrs: ['203.0.113.0/24'] })).status).toBe(400);

    const tested = await admin.call('POST', '/keys/test', { apiKey });
    expect(tested.body).toMatchObject({ accepted: false, status: 403, code: 'publishable_key_forbidden', key: { id: key.id } });

    expect((await admin.call('POST', `/keys/${key.id}/revoke`)).body.key.status).toBe('revoked');
    const revoked = await apiClient(env.stack, apiKey)('GET', `/v1/token/${token}`);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('api_key_invalid');
  });

  it('refuses origins on a secret key', async () => {
    const res = await admin.call('POST', '/keys', { mode: 'test', allowedOrigins: ['https://shop.example'] });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('allowedOrigins');
  });
});
