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

  it('lets one card at a time go to the merchant, numbers the attempts and stops at the cap', async () => {
    const store = make();
    const session = aSession();
    await store.create(session);
    const [a, b] = await Promise.all([store.beginAttempt(session.id, 2, NOW), store.beginAttempt(session.id, 2, NOW)]);
    expect([a, b]).toEqual(
      expect.arrayContaining([
        { began: true, attempt: 1 },
        { began: false, reason: 'processing' },
      ]),
    );
    expect((await store.get(session.id))?.payment).toEqual({ status: 'processing', attempts: 1, declineMessage: null });
    // A cancel never races a charge: it waits for the attempt to settle.
    expect(await store.finish(session.id, 'canceled', null, NOW)).toBe('not_open');
    expect(await store.settleDeclined(session.id, 2, 'no')).toBe(false);
    expect(await store.settleDeclined(session.id, 1, 'Insufficient funds')).toBe(true);
    expect((await store.get(session.id))?.payment).toEqual({ status: 'declined', attempts: 1, declineMessage: 'Insufficient funds' });
    expect(await store.beginAttempt(session.id, 2, NOW)).toEqual({ began: true, attempt: 2 });
    await store.settleDeclined(session.id, 2, 'again');
    expect(await store.beginAttempt(session.id, 2, NOW)).toEqual({ began: false, reason: 'attempts_used' });
  });

  it('ends a session by its attempt in flight, even past expiry, and then takes no card', async () => {
    const store = make();
    const session = aSession({ expiresAt: new Date(NOW.getTime() + 1000).toISOString() });
    await store.create(session);
    expect(await store.beginAttempt(session.id, 5, NOW)).toEqual({ began: true, attempt: 1 });
    const later = new Date(NOW.getTime() + 5000);
    const payment = { status: 'unknown' as const, attempts: 1, declineMessage: null };
    expect(await store.finish(session.id, 'completed', RESULT, later, { attempt: 2, payment })).toBe('not_open');
    expect(await store.finish(session.id, 'completed', RESULT, later, { attempt: 1, payment })).toBe('finished');
    expect(await store.get(session.id)).toMatchObject({ status: 'completed', payment, result: RESULT });
    expect(await store.beginAttempt(session.id, 5, NOW)).toEqual({ began: false, reason: 'not_open' });
  });

  it('lists a merchant’s sessions of one mode newest first, page by page, skipping ones no longer stored', async () => {
    const store = make();
    const merchantId = `shop-${Math.random()}`;
    const made: FormSessionRecord[] = [];
    for (let i = 0; i < 5; i++) {
      const session = aSession({ merchantId, createdAt: new Date(NOW.getTime() + i * 1000).toISOString() });
      made.push(session);
      await store.create(session);
    }
    await store.create(aSession({ merchantId, mode: 'live' }));
    await store.create(aSession({ merchantId: `${merchantId}-other` }));
    const newestFirst = made.map((s) => s.id).reverse();
    const first = await store.listPage(merchantId, 'test', undefined, 2);
    expect(first.map((s) => s.id)).toEqual(newestFirst.slice(0, 2));
    const second = await store.listPage(merchantId, 'test', first[1]?.id, 10);
    expect(second.map((s) => s.id)).toEqual(newestFirst.slice(2));
    expect(await store.listPage(merchantId, 'test', 'fs_unknown', 10)).toEqual([]);
  });
}

describe('RedisFormSessionStore', () => {
  const redis = useStoreRedis();
  behavesAsAFormSessionStore(() => new RedisFormSessionStore(redis.redis));

  it('drops an index entry whose session is gone', async () => {
    const store = new RedisFormSessionStore(redis.redis);
    const merchantId = `shop-${Math.random()}`;
    const kept = aSession({ merchantId });
    const gone = aSession({ merchantId, createdAt: new Date(NOW.getTime() + 1000).toISOString() });
    await store.create(kept);
    await store.create(gone);
    await redis.redis.del(`tessera:form-session:${gone.id}`);
    expect((await store.listPage(merchantId, 'test', undefined, 10)).map((s) => s.id)).toEqual([kept.id]);
    expect(await redis.redis.zcard(`tessera:form-session:index:test:${merchantId}`)).toBe(1);
  });

  it('hands the events sweep each session once its expiry has passed, until the sweep forgets it', async () => {
    await redis.redis.del('tessera:form-session:expiry');
    const store = new RedisFormSessionStore(redis.redis);
    const soon = aSession({ expiresAt: new Date(NOW.getTime() + 1000).toISOString() });
    const later = aSession({ expiresAt: new Date(NOW.getTime() + 5000).toISOString() });
    const gone = aSession({ expiresAt: new Date(NOW.getTime() + 2000).toISOString() });
    for (const s of [soon, later, gone]) await store.create(s);
    await redis.redis.del(`tessera:form-session:${gone.id}`);

    expect(await store.dueForSweep(NOW, 10)).toEqual([]);
    const due = await store.dueForSweep(new Date(NOW.getTime() + 3000), 10);
    expect(due.map((s) => s.id)).toEqual([soon.id]);
    // The id without a session was dropped from the index on the way.
    expect(await redis.redis.zscore('tessera:form-session:expiry', gone.id)).toBeNull();

    await store.forgetSwept([soon.id]);
    expect((await store.dueForSweep(new Date(NOW.getTime() + 6000), 10)).map((s) => s.id)).toEqual([later.id]);
  });
});
