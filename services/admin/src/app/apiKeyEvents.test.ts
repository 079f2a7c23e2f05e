import { RedisApiKeyStore, RedisAuditLog, RedisEventStore } from '@tessera/merchant-data';
import { TEST_PEPPER } from '../testing/fixtures';
import { useAdminRedis } from '../testing/redis';
import { sweepExpiringApiKeys, type EventRecorder } from './apiKeyEvents';
import { createApiKey, parseCreateKeyInput, revokeApiKey, scheduleApiKeyRevocation, type ApiKeyDeps, type KeyCaller } from './apiKeys';

const ACME: KeyCaller = { actor: { id: 'op_acme', email: 'ops@acme.test' }, ip: '198.18.0.2', merchantId: 'acme' };
const DAY = 86_400_000;

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());

function setup(recorder: EventRecorder = new RedisEventStore(db.redis)) {
  let nowMs = Date.parse('2030-01-01T00:00:00.000Z');
  const failures: string[] = [];
  const deps: ApiKeyDeps = {
    keyStore: new RedisApiKeyStore(db.redis),
    audit: new RedisAuditLog(db.redis, 100),
    pepper: TEST_PEPPER,
    now: () => new Date(nowMs),
    events: { recorder, onFailure: (type) => failures.push(type) },
  };
  return {
    deps,
    failures,
    events: () => new RedisEventStore(db.redis).list('acme', 'test', { limit: 20 }),
    advance: (ms: number) => {
      nowMs += ms;
    },
  };
}

const input = (extra: Record<string, unknown> = {}) => parseCreateKeyInput({ merchantId: 'acme', mode: 'test', ...extra });

describe('API key events', () => {
  it('records api_key.created and api_key.revoked with the key id, kind and mode, never the key, and a second revoke records nothing', async () => {
    const { deps, events, advance } = setup();
    const { apiKey, record } = await createApiKey(deps, ACME, input());
    advance(1000);
    await revokeApiKey(deps, ACME, record.id);
    await revokeApiKey(deps, ACME, record.id);
    const { data } = await events();
    expect(data.map((e) => [e.type, e.merchantId, e.mode, e.data.object])).toEqual([
      ['api_key.revoked', 'acme', 'test', { id: record.id, kind: 'secret', mode: 'test' }],
      ['api_key.created', 'acme', 'test', { id: record.id, kind: 'secret', mode: 'test' }],
    ]);
    const raw = JSON.stringify(data);
    expect(raw).not.toContain(apiKey);
    expect(raw).not.toContain(record.digest);
  });

  it('still creates and revokes the key when its event cannot be recorded, and counts the failure', async () => {
    const broken = { record: () => Promise.reject(new Error('down')), recordOnce: () => Promise.reject(new Error('down')) };
    const { deps, failures } = setup(broken);
    const { record } = await createApiKey(deps, ACME, input());
    const { record: revoked } = await revokeApiKey(deps, ACME, record.id);
    expect(revoked.revokedAt).toBeDefined();
    expect(failures).toEqual(['api_key.created', 'api_key.revoked']);
  });

  it('records api_key.expiring_soon once for a key whose revocation is within the days, and again if it is brought forward', async () => {
    const { deps, events, advance } = setup();
    const { record: soon } = await createApiKey(deps, ACME, input());
    const { record: far } = await createApiKey(deps, ACME, input());
    const { record: revoked } = await createApiKey(deps, ACME, input());
    await createApiKey(deps, ACME, input());
    await scheduleApiKeyRevocation(deps, ACME, soon.id, 5 * DAY);
    await scheduleApiKeyRevocation(deps, ACME, far.id, 30 * DAY);
    await scheduleApiKeyRevocation(deps, ACME, revoked.id, 2 * DAY);
    await revokeApiKey(deps, ACME, revoked.id);

    const sweep = () => sweepExpiringApiKeys({ ...deps.events!, keyStore: deps.keyStore, days: 7, now: deps.now });
    expect(await sweep()).toEqual({ recorded: 1 });
    expect(await sweep()).toEqual({ recorded: 0 });
    advance(DAY);
    await scheduleApiKeyRevocation(deps, ACME, soon.id, DAY);
    expect(await sweep()).toEqual({ recorded: 1 });

    const expiring = (await events()).data.filter((e) => e.type === 'api_key.expiring_soon');
    expect(expiring.map((e) => e.data.object)).toEqual([
      { id: soon.id, kind: 'secret', mode: 'test' },
      { id: soon.id, kind: 'secret', mode: 'test' },
    ]);
  });
});
