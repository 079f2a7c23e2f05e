import { parseCidrList } from '@tessera/common';
import { newOperatorRecord } from '../domain/operators';
import { hashPassword } from '../domain/passwords';
import { RedisOperatorStore } from '../store/redisAdminStores';
import { RedisMerchantSettingsStore } from '@tessera/merchant-data';
import { anAdminDeps } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { startApp, type RunningApp } from '../../../../packages/edge/src/testing/http';
import { createAdminApp } from './adminRouter';

// One scrypt per sign-in, slow on a loaded machine.
jest.setTimeout(60_000);

const PASSWORD = 'operator-password-1';

const db = useAdminRedis();
let app: RunningApp;
let session: { cookie: string; csrf: string };

beforeAll(async () => {
  const operators = new RedisOperatorStore(db.redis);
  await operators.create(
    newOperatorRecord({ email: 'ops@acme.test', passwordHash: await hashPassword(PASSWORD), merchantId: 'acme', now: new Date() }),
  );
  app = await startApp(
    createAdminApp(
      anAdminDeps(db.redis, {
        operators,
        merchantSettings: new RedisMerchantSettingsStore(db.redis),
        trustedProxies: parseCidrList(['127.0.0.1/32']),
      }),
    ),
  );
  const res = await login({ email: 'ops@acme.test', password: PASSWORD });
  expect(res.status).toBe(200);
  const cookie = (res.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '';
  session = { cookie, csrf: res.json().csrfToken };
});

afterAll(() => app.close());

function login(body: unknown) {
  return app.request('POST', '/admin/v1/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function call(method: string, path: string, body?: unknown) {
  return app.request(method, `/admin/v1${path}`, {
    headers: {
      cookie: session.cookie,
      'x-csrf-token': session.csrf,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

describe('admin API input', () => {
  it.each<[string, unknown, string, string]>([
    ['no password', { email: 'ops@acme.test' }, 'parameter_missing', 'password'],
    ['an empty password (a cleared form field)', { email: 'ops@acme.test', password: '' }, 'parameter_missing', 'password'],
    ['a null email', { email: null, password: PASSWORD }, 'parameter_missing', 'email'],
    ['a number as the email', { email: 7, password: PASSWORD }, 'parameter_invalid', 'email'],
    ['an over-long code', { email: 'ops@acme.test', password: PASSWORD, code: '1'.repeat(17) }, 'parameter_invalid', 'code'],
    ['an unknown field', { email: 'ops@acme.test', password: PASSWORD, remember: true }, 'parameter_unknown', 'remember'],
  ])('refuses a sign-in with %s before checking anything, naming the field', async (_label, body, code, param) => {
    const res = await login(body);
    expect(res.status).toBe(400);
    expect(res.headers['x-tessera-error']).toBe(code);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it.each<[string, string, string]>([
    ['a limit of 0', '/audit?limit=0', 'limit'],
    ['a limit that is not a number', '/audit?limit=ten', 'limit'],
    ['a repeated merchant id', '/audit?merchantId=a&merchantId=b', 'merchantId'],
    ['a bad merchant id', '/keys?merchantId=a%20b', 'merchantId'],
  ])('refuses %s with 400 parameter_invalid', async (_label, path, param) => {
    const res = await call('GET', path);
    expect(res.status).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'parameter_invalid', param });
  });

  it('reads an empty limit as the default', async () => {
    expect((await call('GET', '/audit?limit=')).status).toBe(200);
  });

  it('answers a malformed path with 400 invalid_request in the envelope, as the public API does (not a 500)', async () => {
    const res = await call('GET', '/merchants/%E0%A4%A/psp-hosts');
    expect(res.status).toBe(400);
    expect(res.headers['x-tessera-error']).toBe('invalid_request');
    expect(res.json().error).toMatchObject({ code: 'invalid_request', requestId: expect.any(String) });
  });

  it('says the missing PSP host list is required, and an entry that is not a host name is invalid', async () => {
    const missing = await call('PUT', '/merchants/acme/psp-hosts', {});
    expect(missing.json().error).toMatchObject({ code: 'parameter_missing', param: 'pspHosts' });
    const wrong = await call('PUT', '/merchants/acme/psp-hosts', { pspHosts: ['https://api.stripe.com/v1'] });
    expect(wrong.json().error).toMatchObject({ code: 'parameter_invalid', param: 'pspHosts[0]' });
    expect((await call('PUT', '/merchants/globex/psp-hosts', { pspHosts: ['nope nope'] })).status).toBe(403);
  });
});
