import type { TesseraError } from '@tessera/common';
import { RedisFormSessionStore } from '@tessera/merchant-data';
import { useGatewayRedis } from '../testing/redis';
import { createFormSession, formSessionJson, listFormSessions, type FormSessionDeps } from './formSessions';

const SHOP = 'https://shop.test';
const RETURN_URL = `${SHOP}/done`;
const COMPLETION_URL = `${SHOP}/complete`;

describe('form sessions with an amount and a completion URL', () => {
  const redis = useGatewayRedis();
  let clock: Date;
  let deps: FormSessionDeps;
  let merchantId: string;
  const key = (mode: 'test' | 'live' = 'test') => ({ id: 'key_1', merchantId, mode, kind: 'secret' }) as never;

  beforeEach(() => {
    clock = new Date('2030-01-01T00:00:00Z');
    merchantId = `shop-${Math.random().toString(36).slice(2)}`;
    deps = {
      sessions: new RedisFormSessionStore(redis.redis, () => clock),
      merchantSettings: { get: async () => ({ returnUrls: [RETURN_URL, COMPLETION_URL] }) } as never,
      fieldsOrigin: 'https://fields.test',
      ttlSeconds: 1800,
      now: () => clock,
    };
  });

  const refusal = (raw: Record<string, unknown>, mode: 'test' | 'live' = 'test') =>
    createFormSession(deps, key(mode), { returnUrl: RETURN_URL, ...raw }).then(
      () => 'created',
      (err: TesseraError) => `${err.code} ${err.param ?? ''}`.trim(),
    );

  it('keeps the amount, currency, completion URL and display fields the server signed in, and answers them', async () => {
    const record = await createFormSession(deps, key(), {
      returnUrl: RETURN_URL,
      amount: 1234,
      currency: 'eur',
      completionUrl: COMPLETION_URL,
      merchantName: '  Mug Shop ',
      logoUrl: 'https://cdn.shop.test/logo.png',
      submitLabel: 'Buy the mug',
      locale: 'de',
    });
    const stored = await deps.sessions.get(record.id);
    expect(formSessionJson(stored!, deps.fieldsOrigin, clock)).toMatchObject({
      amount: 1234,
      currency: 'eur',
      completionUrl: COMPLETION_URL,
      merchantName: 'Mug Shop',
      logoUrl: 'https://cdn.shop.test/logo.png',
      submitLabel: 'Buy the mug',
      locale: 'de',
      payment: null,
    });
  });

  it('answers a session without them as it always did, with nulls and locale en', async () => {
    const record = await createFormSession(deps, key(), { returnUrl: RETURN_URL });
    expect(formSessionJson(record, deps.fieldsOrigin, clock)).toMatchObject({ amount: null, currency: null, locale: 'en', payment: null });
  });

  it.each([
    [{ amount: 0, currency: 'eur' }, 'parameter_invalid amount'],
    [{ amount: 12.5, currency: 'eur' }, 'parameter_invalid amount'],
    [{ amount: '1234', currency: 'eur' }, 'parameter_invalid amount'],
    [{ amount: 1234, currency: 'EUR' }, 'parameter_invalid currency'],
    [{ amount: 1234, currency: 'xyz' }, 'parameter_invalid currency'],
    [{ amount: 1234 }, 'parameter_missing currency'],
    [{ currency: 'eur' }, 'parameter_missing amount'],
    [{ completionUrl: COMPLETION_URL }, 'parameter_missing amount'],
    [{ amount: 1, currency: 'eur', completionUrl: 'https://evil.test/complete' }, 'return_url_not_registered completionUrl'],
    [{ logoUrl: 'javascript:alert(1)' }, 'parameter_invalid logoUrl'],
    [{ logoUrl: 'https://user:pw@cdn.shop.test/logo.png' }, 'parameter_invalid logoUrl'],
    [{ merchantName: 'a\nb' }, 'parameter_invalid merchantName'],
    [{ merchantName: 'x'.repeat(81) }, 'parameter_invalid merchantName'],
    [{ submitLabel: '' }, 'parameter_missing submitLabel'],
    [{ locale: 'it' }, 'parameter_invalid locale'],
  ])('refuses %j (%s)', async (raw, expected) => {
    expect(await refusal(raw)).toBe(expected);
  });

  it('takes an http logo from a test key only', async () => {
    expect(await refusal({ logoUrl: 'http://cdn.shop.test/logo.png' })).toBe('created');
    expect(await refusal({ logoUrl: 'http://cdn.shop.test/logo.png' }, 'live')).toBe('parameter_invalid logoUrl');
  });

  it('lists the key’s merchant’s sessions of its mode newest first, by page and by status', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock = new Date(clock.getTime() + 1000);
      ids.unshift((await createFormSession(deps, key(), { returnUrl: RETURN_URL })).id);
    }
    await createFormSession(deps, key('live'), { returnUrl: RETURN_URL });
    const first = await listFormSessions(deps, key(), { limit: '2' });
    expect(first.sessions.map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect(first.hasMore).toBe(true);
    const rest = await listFormSessions(deps, key(), { limit: '2', startingAfter: ids[1] });
    expect(rest).toMatchObject({ hasMore: false });
    expect(rest.sessions.map((s) => s.id)).toEqual(ids.slice(2));
    await deps.sessions.finish(ids[1] as string, 'canceled', null, clock);
    expect((await listFormSessions(deps, key(), { status: 'canceled' })).sessions.map((s) => s.id)).toEqual([ids[1]]);
    expect((await listFormSessions(deps, key('live'), {})).sessions).toHaveLength(1);
    await expect(listFormSessions(deps, key(), { limit: '0' })).rejects.toMatchObject({ code: 'parameter_invalid', param: 'limit' });
    await expect(listFormSessions(deps, key(), { status: 'paid' })).rejects.toMatchObject({ code: 'parameter_invalid', param: 'status' });
  });
});
