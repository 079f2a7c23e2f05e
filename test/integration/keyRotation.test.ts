import { loggedIn } from './adminClient';
import { apiClient, useSharedStack } from './harness';

jest.setTimeout(60_000);

const env = useSharedStack();
const acme = env.merchant('acme');
const operator = `ops@${acme}.example`;

beforeAll(async () => {
  env.stack.createOperator(operator, 'correct horse battery staple', acme);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('overlapping key rotation against the real gateway', () => {
  it('keeps the old key working until its scheduled expiry, shows the expiry in the CLI and the admin API, then refuses it', async () => {
    // Signed in first: the sign-in's password hash must not eat into the overlap window under load.
    const admin = await loggedIn(env.stack.adminUrl, operator, 'correct horse battery staple');
    const oldKey = env.stack.createKey(acme, 'test');
    const newKey = env.stack.createKey(acme, 'test');
    // 15 s: two CLI runs and three calls must fit in the overlap even when a full run loads the machine.
    const out = env.stack.cli(['revoke', oldKey.id, '--after', '15s']);
    expect(out).toContain('works until');
    const scheduledAt = Date.now();

    const route = '/v1/token/tok.doesnotexist000000000000';
    // Authenticated (404 for the unknown token) rather than 401: both keys work during the overlap.
    expect((await apiClient(env.stack, oldKey.apiKey)('GET', route)).status).toBe(404);
    expect((await apiClient(env.stack, newKey.apiKey)('GET', route)).status).toBe(404);

    const [listed] = JSON.parse(env.stack.cli(['list', '--json'])).filter((k: { id: string }) => k.id === oldKey.id);
    expect(listed.expiresAt).toEqual(expect.any(String));
    const viewOf = async () =>
      (
        (await admin.call('GET', `/keys?merchantId=${acme}`)).body.keys as Array<{ id: string; status: string; expiresAt: string | null }>
      ).find((k) => k.id === oldKey.id);
    expect(await viewOf()).toMatchObject({ status: 'active', expiresAt: listed.expiresAt });

    await sleep(Math.max(0, Date.parse(listed.expiresAt) - Date.now()) + 200);
    expect(Date.now() - scheduledAt).toBeGreaterThanOrEqual(14_000);
    const refused = await apiClient(env.stack, oldKey.apiKey)('GET', route);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('api_key_invalid');
    expect((await apiClient(env.stack, newKey.apiKey)('GET', route)).status).toBe(404);
    expect(await viewOf()).toMatchObject({ status: 'expired', expiresAt: listed.expiresAt });
  });
});
