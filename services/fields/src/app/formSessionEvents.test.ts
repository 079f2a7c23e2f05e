import { newCsrfToken, newFormSessionId, RedisEventStore, RedisFormSessionStore, type FormSessionRecord } from '@tessera/merchant-data';
import { useFieldsRedis } from '../testing/redis';
import { completedEmission, sweepFormSessions } from './formSessionEvents';

const START = Date.parse('2030-01-01T12:00:00.000Z');

function aSession(merchantId: string, expiresInMs: number): FormSessionRecord {
  return {
    id: newFormSessionId(),
    merchantId,
    mode: 'test',
    keyId: 'key_1',
    returnUrl: 'https://shop.test/done',
    cancelUrl: 'https://shop.test/cancel',
    csrfToken: newCsrfToken(),
    createdAt: new Date(START).toISOString(),
    expiresAt: new Date(START + expiresInMs).toISOString(),
    status: 'open',
    finishedAt: null,
    result: null,
  };
}

const RESULT = { token: 'tok.AbCdEfGhIjKlMnOpQrStUv', card: { brand: 'visa', last4: '4242', expiryMonth: 12, expiryYear: 2031 } };

describe('the form sessions events sweep', () => {
  const db = useFieldsRedis();

  it('records form_session.expired for a session that expired unused, completed for one whose event is missing, nothing for a canceled one, each once', async () => {
    let nowMs = START;
    const now = () => new Date(nowMs);
    const sessions = new RedisFormSessionStore(db.redis, now);
    const events = new RedisEventStore(db.redis);
    const merchantId = `shop-${Math.random()}`;
    const unused = aSession(merchantId, 1000);
    const completed = aSession(merchantId, 1000);
    const canceled = aSession(merchantId, 1000);
    const open = aSession(merchantId, 60_000);
    for (const s of [unused, completed, canceled, open]) await sessions.create(s);
    expect(await sessions.finish(completed.id, 'completed', RESULT, now())).toBe('finished');
    expect(await sessions.finish(canceled.id, 'canceled', null, now())).toBe('finished');

    nowMs = START + 5000;
    const deps = { recorder: events, sessions, now };
    expect(await sweepFormSessions(deps)).toEqual({ expired: 1, completed: 1 });
    // A second sweep (another replica, or the next interval) records nothing again.
    expect(await sweepFormSessions(deps)).toEqual({ expired: 0, completed: 0 });

    const recorded = (await events.list(merchantId, 'test', { limit: 10 })).data;
    expect(recorded.map((e) => [e.type, e.data.object]).sort()).toEqual(
      [
        ['form_session.expired', { id: unused.id, status: 'expired' }],
        ['form_session.completed', { id: completed.id, status: 'completed', token: RESULT.token, brand: 'visa', last4: '4242' }],
      ].sort(),
    );
    expect(recorded.every((e) => e.merchantId === merchantId && e.mode === 'test')).toBe(true);
  });

  it('does not record the completed event a second time when the completing request already did', async () => {
    const now = () => new Date(START);
    const sessions = new RedisFormSessionStore(db.redis, now);
    const events = new RedisEventStore(db.redis);
    const merchantId = `shop-${Math.random()}`;
    const session = aSession(merchantId, 1000);
    await sessions.create(session);
    await sessions.finish(session.id, 'completed', RESULT, now());
    const stored = await sessions.get(session.id);
    expect(
      await events.recordOnce(
        {
          id: 'evt_aaaaaaaaaaaaaaaa',
          type: 'form_session.completed',
          created: 1,
          merchantId,
          mode: 'test',
          data: { object: completedEmission(stored!).object },
        },
        completedEmission(stored!).once!,
      ),
    ).toBe(true);
    expect(await sweepFormSessions({ recorder: events, sessions, now: () => new Date(START + 5000) })).toEqual({
      expired: 0,
      completed: 0,
    });
  });

  it('leaves a session for the next sweep when its event cannot be recorded now, and never throws for it', async () => {
    const now = () => new Date(START + 5000);
    const sessions = new RedisFormSessionStore(db.redis, () => new Date(START));
    const merchantId = `shop-${Math.random()}`;
    const session = aSession(merchantId, 1000);
    await sessions.create(session);
    const failures: string[] = [];
    const broken = { record: () => Promise.reject(new Error('down')), recordOnce: () => Promise.reject(new Error('down')) };
    expect(await sweepFormSessions({ recorder: broken, sessions, now, onFailure: (t) => failures.push(t) })).toEqual({
      expired: 0,
      completed: 0,
    });
    expect(failures).toEqual(['form_session.expired']);
    const events = new RedisEventStore(db.redis);
    expect(await sweepFormSessions({ recorder: events, sessions, now })).toEqual({ expired: 1, completed: 0 });
  });
});
