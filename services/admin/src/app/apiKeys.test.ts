import { RedisApiKeyStore, RedisAuditLog } from '@tessera/merchant-data';
import { TesseraError } from '@tessera/common';
import { TEST_PEPPER } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import {
  checkApiKey,
  createApiKey,
  getApiKey,
  listApiKeys,
  parseCreateKeyInput,
  parseRestrictionChanges,
  restrictApiKey,
  revokeApiKey,
  scheduleApiKeyRevocation,
  testApiKey,
  type ApiKeyDeps,
  type KeyCaller,
} from './apiKeys';

const PLATFORM: KeyCaller = { actor: { id: 'op_platform', email: 'platform@tessera.test' }, ip: '198.18.0.1', merchantId: null };
const ACME: KeyCaller = { actor: { id: 'op_acme', email: 'ops@acme.test' }, ip: '198.18.0.2', merchantId: 'acme' };

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());

function setup() {
  let nowMs = Date.parse('2030-01-01T00:00:00.000Z');
  const audit = new RedisAuditLog(db.redis, 100);
  const deps: ApiKeyDeps = { keyStore: new RedisApiKeyStore(db.redis), audit, pepper: TEST_PEPPER, now: () => new Date(nowMs) };
  return {
    deps,
    audit: () => audit.list({ limit: 100 }),
    advance: (ms: number) => {
      nowMs += ms;
    },
  };
}

async function refusal(promise: Promise<unknown> | (() => unknown)): Promise<TesseraError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
  throw new Error('expected a TesseraError');
}

const secretInput = (extra: Record<string, unknown> = {}) => parseCreateKeyInput({ merchantId: 'acme', mode: 'test', ...extra });
const publishableInput = (extra: Record<string, unknown> = {}) =>
  parseCreateKeyInput({ merchantId: 'acme', mode: 'test', kind: 'publishable', allowedOrigins: ['https://shop.example'], ...extra });

describe('createApiKey', () => {
  it('creates a secret key by default, stores only its digest, and audits it without the key', async () => {
    const { deps, audit } = setup();
    const { apiKey, record } = await createApiKey(deps, ACME, secretInput({ allowedCidrs: ['203.0.113.9/24'] }));
    expect(apiKey).toMatch(/^tsk_test_[0-9A-Za-z]{38}$/);
    expect(await deps.keyStore.get(record.id)).toMatchObject({ allowedCidrs: ['203.0.113.0/24'], merchantId: 'acme' });
    const [entry] = await audit();
    expect(entry).toMatchObject({ action: 'key.created', actor: 'ops@acme.test', ip: '198.18.0.2', keyId: record.id });
    expect(entry?.details).toEqual({ mode: 'test', allowedCidrs: ['203.0.113.0/24'], allowedDomains: [] });
    expect(JSON.stringify(await audit())).not.toContain(apiKey);
  });

  it('creates a publishable key with its canonical origins, and audits its kind and origins', async () => {
    const { deps, audit } = setup();
    const { apiKey, record } = await createApiKey(
      deps,
      ACME,
      publishableInput({ allowedOrigins: ['https://shop.example', 'https://*.shop.example:8443'] }),
    );
    expect(apiKey).toMatch(/^tpk_test_[0-9A-Za-z]{38}$/);
    expect(record).toMatchObject({ kind: 'publishable', allowedOrigins: ['https://shop.example', 'https://*.shop.example:8443'] });
    expect((await audit())[0]?.details).toMatchObject({ kind: 'publishable', allowedOrigins: record.allowedOrigins });
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a publishable key without an origin', { kind: 'publishable' }, 'parameter_missing', 'allowedOrigins'],
    [
      'an origin not written canonically',
      { kind: 'publishable', allowedOrigins: ['https://shop.example', 'https://Shop.Example/'] },
      'parameter_invalid',
      'allowedOrigins[1]',
    ],
    ['a publishable key with an empty origin list', { kind: 'publishable', allowedOrigins: [] }, 'parameter_missing', 'allowedOrigins'],
    [
      'an IP allowlist on a publishable key',
      { kind: 'publishable', allowedOrigins: ['https://shop.example'], allowedCidrs: ['203.0.113.0/24'] },
      'parameter_invalid',
      'allowedCidrs',
    ],
    [
      'domains on a publishable key',
      { kind: 'publishable', allowedOrigins: ['https://shop.example'], allowedDomains: ['shop.example'] },
      'parameter_invalid',
      'allowedDomains',
    ],
    [
      'an http origin on a live publishable key',
      { kind: 'publishable', mode: 'live', allowedOrigins: ['http://shop.example'] },
      'parameter_invalid',
      'allowedOrigins',
    ],
    ['origins on a secret key', { allowedOrigins: ['https://shop.example'] }, 'parameter_invalid', 'allowedOrigins'],
    ['an unknown kind', { kind: 'browser' }, 'parameter_invalid', 'kind'],
    [
      'a path in an origin',
      { kind: 'publishable', allowedOrigins: ['https://shop.example/pay'] },
      'parameter_invalid',
      'allowedOrigins[0]',
    ],
    ['an unknown mode', { mode: 'prod' }, 'parameter_invalid', 'mode'],
    ['no mode', { mode: undefined }, 'parameter_missing', 'mode'],
    ['an unknown field', { allowedIps: ['203.0.113.0/24'] }, 'parameter_unknown', 'allowedIps'],
    ['a bad second IP range', { allowedCidrs: ['10.0.0.0/8', '10.0.0.0/33'] }, 'parameter_invalid', 'allowedCidrs[1]'],
    ['a list that is not an array', { allowedDomains: 'shop.example' }, 'parameter_invalid', 'allowedDomains'],
    ['a bad merchant id', { merchantId: 'a b' }, 'parameter_invalid', 'merchantId'],
  ])('refuses %s with 400 naming the field', async (_label, extra, code, param) => {
    const err = await refusal(() => parseCreateKeyInput({ merchantId: 'acme', mode: 'test', ...extra }));
    expect(err).toMatchObject({ status: 400, code, param });
  });

  it('names the bad entry in the message, as the admin API and the dashboard show it', async () => {
    const err = await refusal(() => parseCreateKeyInput({ merchantId: 'acme', mode: 'test', allowedCidrs: ['10.0.0.0/33'] }));
    expect(err.message).toBe(
      'IP range "10.0.0.0/33" is not an IPv4/IPv6 address or CIDR (examples: 203.0.113.7, 203.0.113.0/24, 2001:db8::/32).',
    );
    const unknown = await refusal(() => parseCreateKeyInput({ merchantId: 'acme', mode: 'test', allowedIps: [] }));
    expect(unknown.message).toBe('Unknown parameter "allowedIps".');
  });

  it('checks the input again itself, so a caller that skipped parsing writes nothing', async () => {
    const { deps } = setup();
    const unchecked = {
      merchantId: 'acme',
      mode: 'test' as const,
      kind: 'publishable' as const,
      allowedCidrs: [],
      allowedDomains: [],
      allowedOrigins: [],
    };
    expect(await refusal(createApiKey(deps, ACME, unchecked))).toMatchObject({ code: 'parameter_missing', param: 'allowedOrigins' });
    expect(await deps.keyStore.list()).toEqual([]);
  });

  it("refuses another merchant's key to a merchant operator (403)", async () => {
    const { deps } = setup();
    const err = await refusal(createApiKey(deps, ACME, parseCreateKeyInput({ merchantId: 'globex', mode: 'test' })));
    expect(err).toMatchObject({ status: 403, code: 'merchant_forbidden' });
  });
});

describe('listApiKeys and getApiKey', () => {
  it("list the caller's merchants' keys newest first; another merchant's key is 404", async () => {
    const { deps, advance } = setup();
    const first = await createApiKey(deps, ACME, secretInput());
    advance(1000);
    const second = await createApiKey(deps, ACME, publishableInput());
    const globex = await createApiKey(deps, PLATFORM, parseCreateKeyInput({ merchantId: 'globex', mode: 'test' }));
    expect((await listApiKeys(deps, ACME)).map((k) => k.id)).toEqual([second.record.id, first.record.id]);
    expect(await listApiKeys(deps, PLATFORM)).toHaveLength(3);
    expect((await listApiKeys(deps, PLATFORM, { merchantId: 'globex' })).map((k) => k.id)).toEqual([globex.record.id]);
    expect((await getApiKey(deps, ACME, first.record.id)).id).toBe(first.record.id);
    expect(await refusal(getApiKey(deps, ACME, globex.record.id))).toMatchObject({ status: 404, code: 'api_key_not_found' });
    expect(await refusal(getApiKey(deps, ACME, 'not-a-key-id'))).toMatchObject({ code: 'api_key_not_found' });
  });
});

describe('restrictApiKey', () => {
  it('replaces only the lists given and audits before and after', async () => {
    const { deps, audit } = setup();
    const { record } = await createApiKey(deps, ACME, secretInput({ allowedCidrs: ['10.0.0.0/8'], allowedDomains: ['shop.example'] }));
    const { record: updated } = await restrictApiKey(deps, ACME, record.id, parseRestrictionChanges({ allowedCidrs: ['203.0.113.0/24'] }));
    expect(updated).toMatchObject({ allowedCidrs: ['203.0.113.0/24'], allowedDomains: ['shop.example'] });
    expect((await audit())[0]).toMatchObject({
      action: 'key.updated',
      details: { allowedCidrs: ['203.0.113.0/24'], previousAllowedCidrs: ['10.0.0.0/8'], previousAllowedDomains: ['shop.example'] },
    });
  });

  it("changes a publishable key's origins, but never to none, and never adds an IP allowlist", async () => {
    const { deps } = setup();
    const { record } = await createApiKey(deps, ACME, publishableInput());
    const { record: updated } = await restrictApiKey(deps, ACME, record.id, { allowedOrigins: ['https://checkout.example'] });
    expect(updated.allowedOrigins).toEqual(['https://checkout.example']);
    expect(await refusal(restrictApiKey(deps, ACME, record.id, { allowedOrigins: [] }))).toMatchObject({
      status: 400,
      param: 'allowedOrigins',
    });
    expect(await refusal(restrictApiKey(deps, ACME, record.id, { allowedCidrs: ['203.0.113.0/24'] }))).toMatchObject({
      status: 400,
      param: 'allowedCidrs',
    });
    expect((await deps.keyStore.get(record.id))?.allowedOrigins).toEqual(['https://checkout.example']);
  });

  it('refuses to change a revoked key (400)', async () => {
    const { deps } = setup();
    const { record } = await createApiKey(deps, ACME, secretInput());
    await revokeApiKey(deps, ACME, record.id);
    expect(await refusal(restrictApiKey(deps, ACME, record.id, { allowedCidrs: [] }))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/revoked/),
    });
  });
});

describe('revokeApiKey and scheduleApiKeyRevocation', () => {
  it('revokes once: a second revocation keeps the first time and writes no second audit entry', async () => {
    const { deps, audit, advance } = setup();
    const { record } = await createApiKey(deps, ACME, publishableInput());
    const first = await revokeApiKey(deps, ACME, record.id);
    advance(60_000);
    const again = await revokeApiKey(deps, ACME, record.id);
    expect(first.alreadyRevoked).toBe(false);
    expect(again).toMatchObject({ alreadyRevoked: true, record: { revokedAt: first.record.revokedAt } });
    expect((await audit()).filter((e) => e.action === 'key.revoked')).toHaveLength(1);
  });

  it('schedules a revocation from the injected clock, only ever earlier, and not on a revoked key', async () => {
    const { deps, audit } = setup();
    const { record } = await createApiKey(deps, ACME, secretInput());
    const first = await scheduleApiKeyRevocation(deps, ACME, record.id, 3_600_000);
    expect(first).toMatchObject({ scheduled: true, record: { expiresAt: '2030-01-01T01:00:00.000Z' } });
    const later = await scheduleApiKeyRevocation(deps, ACME, record.id, 86_400_000);
    expect(later).toMatchObject({ scheduled: false, record: { expiresAt: '2030-01-01T01:00:00.000Z' } });
    expect((await audit()).filter((e) => e.action === 'key.expiry_scheduled')).toHaveLength(1);
    await revokeApiKey(deps, ACME, record.id);
    expect(await refusal(scheduleApiKeyRevocation(deps, ACME, record.id, 60_000))).toMatchObject({ status: 400 });
  });
});

describe('checkApiKey and testApiKey', () => {
  it('refuses a publishable key on the /v1 routes with 403, or 401 when its Origin is not allowed', async () => {
    const { deps } = setup();
    const { apiKey } = await createApiKey(deps, ACME, publishableInput());
    expect(await checkApiKey(deps, apiKey, { clientIp: '192.0.2.1', origin: undefined })).toMatchObject({
      ok: false,
      code: 'publishable_key_forbidden',
    });
    expect(await checkApiKey(deps, apiKey, { clientIp: '192.0.2.1', origin: 'https://shop.example' })).toMatchObject({
      code: 'publishable_key_forbidden',
    });
    expect(await checkApiKey(deps, apiKey, { clientIp: '192.0.2.1', origin: 'https://evil.example' })).toMatchObject({
      code: 'origin_not_allowed',
    });
    const secret = await createApiKey(deps, ACME, secretInput());
    expect(await checkApiKey(deps, secret.apiKey, { clientIp: '192.0.2.1', origin: undefined })).toMatchObject({ ok: true });
  });

  it('reports the status a /v1 request would get, and hides keys of merchants the caller cannot manage', async () => {
    const { deps, audit } = setup();
    const { apiKey, record } = await createApiKey(deps, ACME, publishableInput());
    const verdict = await testApiKey(deps, ACME, { apiKey });
    expect(verdict).toMatchObject({ accepted: false, status: 403, code: 'publishable_key_forbidden', clientIp: '198.18.0.2' });
    expect(verdict.record?.id).toBe(record.id);
    const globex: KeyCaller = { ...ACME, merchantId: 'globex' };
    expect(await testApiKey(deps, globex, { apiKey })).toMatchObject({ accepted: false, status: 401, code: 'api_key_invalid' });
    expect((await audit())[0]).toMatchObject({ action: 'key.tested', merchantId: 'globex', keyId: null });
    expect(await refusal(testApiKey(deps, ACME, { apiKey, clientIp: '203.0.113.0/24' }))).toMatchObject({ param: 'clientIp' });
  });
});
