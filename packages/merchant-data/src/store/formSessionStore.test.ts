import { newCsrfToken, newFormSessionId, type FormSessionRecord } from '../domain/formSessions';
import { RedisFormSessionStore, type FormSessionStore } from './formSessionStore';
import { useStoreRedis } from '../testing/redis';

const NOW = new Date();

function aSession(overrides: Partial<FormSessionRecord> = {}): FormSessionRecord {
  return {
    id: newFormSessionId(),
    merchantId: 'shop',
    mode: 'test',
    keyId: 'key_1',
    returnUrl: 'https://shop.test/done',
    cancelUrl: null,
    csrfToken: newCsrfToken(),
    createdAt: NOW.toISOString(),
    expiresAt: new Date(NOW.getTime() + 60_000).toISOString(),
    status: 'open',
    finishedAt: null,
    result: null,
    ...overrides,
  };
}

const RESULT = { token: 'tok.x', card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2030 } };

function behavesAsAFormSessionStore(make: () => FormSessionStore): void {
  it('finishes an open session once: a second attempt is told it is no longer open', async () => {
    const store = make();
    const session = aSession();
    await store.create(session);
    const outcomes = await Promise.all([
      store.finish(session.id, 'completed', RESULT, NOW),
      store.finish(session.id, 'canceled', null, NOW),
    ]);
    expect(outcomes.sort()).toEqual(['finished', 'not_open']);
    const read = await store.get(session.id);
    // Whichever won, the record says so consistently.
    if (read?.status === 'completed') expect(read.result).toEqual(RESULT);
    else expect(read).toMatchObject({ status: 'canceled', result: null });
    expect(read?.csrfToken).toBe(session.csrfToken);
    expect(read?.finishedAt).toBe(NOW.toISOString());
  });

  it('refuses to finish an expired or unknown session', async () => {
    const store = make();
    const session = aSession({ expiresAt: new Date(NOW.getTime() - 1).toISOString() });
    await store.create(session);
    expect(await store.finish(session.id, 'completed', RESULT, NOW)).toBe('expired');
    expect(await store.finish(newFormSessionId(), 'completed', RESULT, NOW)).toBe('missing');
    expect((await store.get(session.id))?.status).toBe('open');
  });
}

describe('RedisFormSessionStore', () => {
  const redis = useStoreRedis();
  behavesAsAFormSessionStore(() => new RedisFormSessionStore(redis.redis));
});
