import type { TesseraError } from '@tessera/common';
import pino from 'pino';
import { buildEvent, RedisEventStore, type EventRecord } from '@tessera/merchant-data';
import { useGatewayRedis } from '../testing/redis';
import { eventRecording, getEvent, listEvents, type EventDeps } from './events';

describe('event use cases', () => {
  const redis = useGatewayRedis();
  let deps: EventDeps & { events: RedisEventStore };
  let merchantId: string;
  const key = (mode: 'test' | 'live' = 'test', merchant = merchantId) => ({ merchantId: merchant, mode });
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'ok',
      (err: TesseraError) => `${err.code}${err.param ? ` ${err.param}` : ''}`,
    );

  async function recorded(type: EventRecord['type'], secondsAgo: number, mode: 'test' | 'live' = 'test'): Promise<EventRecord> {
    const event = buildEvent({ type, merchantId, mode, object: { id: 'tok_abcdefgh' }, now: new Date(Date.now() - secondsAgo * 1000) });
    await deps.events.record(event);
    return event;
  }

  beforeEach(() => {
    merchantId = `shop-${Math.random().toString(36).slice(2)}`;
    deps = { events: new RedisEventStore(redis.redis) };
  });

  it('lists the mode’s events newest first, as the merchant sees them (no merchant id), by type and page', async () => {
    const a = await recorded('token.created', 30);
    const b = await recorded('token.deleted', 20);
    const c = await recorded('token.created', 10);
    await recorded('token.created', 5, 'live');
    const all = await listEvents(deps, key(), {});
    expect(all).toEqual({
      object: 'list',
      data: [c, b, a].map((e) => ({ id: e.id, object: 'event', type: e.type, created: e.created, mode: 'test', data: e.data })),
      hasMore: false,
    });
    expect(JSON.stringify(all)).not.toContain(merchantId);
    expect((await listEvents(deps, key(), { type: 'token.created' })).data.map((e) => e.id)).toEqual([c.id, a.id]);
    const first = await listEvents(deps, key(), { limit: '2' });
    expect(first.data.map((e) => e.id)).toEqual([c.id, b.id]);
    expect(first.hasMore).toBe(true);
    const second = await listEvents(deps, key(), { limit: '2', startingAfter: b.id });
    expect(second).toMatchObject({ data: [{ id: a.id }], hasMore: false });
  });

  it.each([
    [{ limit: '0' }, 'parameter_invalid limit'],
    [{ limit: '101' }, 'parameter_invalid limit'],
    [{ limit: 'ten' }, 'parameter_invalid limit'],
    [{ type: 'token.exploded' }, 'parameter_invalid type'],
    [{ type: ['token.created', 'token.deleted'] }, 'parameter_invalid type'],
    [{ startingAfter: 'tok_123' }, 'parameter_invalid startingAfter'],
    [{ since: '1' }, 'parameter_unknown since'],
  ])('refuses the query %j: %s', async (query, expected) => {
    expect(await codeOf(listEvents(deps, key(), query))).toBe(expected);
  });

  it('reads one event of the key’s merchant and mode; others, unknown and malformed ids are not found', async () => {
    const event = await recorded('token.created', 1);
    expect(await getEvent(deps, key(), event.id)).toMatchObject({ id: event.id, object: 'event', type: 'token.created' });
    expect(await codeOf(getEvent(deps, key('live'), event.id))).toBe('event_not_found');
    expect(await codeOf(getEvent(deps, key('test', 'someone-else'), event.id))).toBe('event_not_found');
    expect(await codeOf(getEvent(deps, key(), 'evt_AAAAAAAAAAAAAAAA'))).toBe('event_not_found');
    expect(await codeOf(getEvent(deps, key(), '../x'))).toBe('event_not_found');
  });

  it('records an event that fits its schema; a refused or failed record is counted and logged, never thrown, never with the object', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const failures: string[] = [];
    const stored: EventRecord[] = [];
    let storeDown = false;
    const record = eventRecording({
      recorder: {
        record: async (event) => {
          if (storeDown) throw new Error('Connection is closed.');
          stored.push(event);
        },
      },
      logger,
      countFailure: (type) => failures.push(type),
      now: () => new Date('2030-01-01T00:00:00Z'),
    });
    const owner = key();
    await record(
      'token.created',
      owner,
      { id: 'tok.Xq3_vB-9kLmN0pQrStUvWxYz01AbCdEf', brand: 'visa', last4: '4242' },
      { requestId: 'req_1' },
    );
    expect(stored).toMatchObject([{ type: 'token.created', merchantId, mode: 'test', created: 1893456000 }]);

    await expect(record('token.created', owner, { id: 'tok.4242424242424242' }, { requestId: 'req_2' })).resolves.toBeUndefined();
    storeDown = true;
    await expect(record('token.deleted', owner, { id: 'tok_abcdefgh' }, { requestId: 'req_3' })).resolves.toBeUndefined();
    expect(failures).toEqual(['token.created', 'token.deleted']);
    expect(stored).toHaveLength(1);
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1] as string)).toMatchObject({
      requestId: 'req_3',
      eventType: 'token.deleted',
      reason: 'Connection is closed.',
    });
    expect(lines.join('')).not.toContain('4242424242424242');
  });
});
