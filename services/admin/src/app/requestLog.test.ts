import { aRequest } from '../testing/fixtures';
import {
  buildRequestLogRecord,
  RedisRequestLogStore,
  type MerchantRecord,
  type RequestFacts,
  type RequestLogRetention,
  type RequestLogStore,
} from '@tessera/merchant-data';
import { useAdminRedis } from '../testing/redis';
import { getRequest, listRequests, parseListRequestsQuery, parseRequestStatsQuery, requestStats, type RequestLogDeps } from './requestLog';

const facts = aRequest;

const db = useAdminRedis();
beforeEach(() => db.redis.flushall());
const storeOf = (retention: RequestLogRetention) => new RedisRequestLogStore(db.redis, retention);

/** An entry as the gateway's recorder writes it (services/gateway/src/app/requestLog.ts). */
const recordOf = (f: RequestFacts): MerchantRecord => ({ merchantId: f.merchantId, record: buildRequestLogRecord(f) });

describe('reading the request log', () => {
  let store: RequestLogStore;
  let deps: RequestLogDeps;
  const platform = { merchantId: null };

  beforeEach(async () => {
    store = storeOf({ maxEntries: 10_000, maxAgeMs: 86_400_000 });
    deps = { store, maxAgeMs: 86_400_000, now: () => new Date() };
    const records: MerchantRecord[] = [];
    for (let i = 0; i < 300; i++) {
      records.push(
        recordOf(
          facts({
            requestId: `req_${i}`,
            status: i % 10 === 0 ? 502 : i % 3 === 0 ? 404 : 201,
            keyId: i % 2 === 0 ? 'key_even' : 'key_odd',
            route: i % 3 === 0 ? '/v1/token/:token' : '/v1/token',
            path: i % 3 === 0 ? `/v1/token/tok.${i}` : '/v1/token',
          }),
        ),
      );
    }
    await store.append(records, new Date());
    // Entry ids are stream ids (per merchant): globex's is written in a later millisecond so that
    // no acme entry has the same id.
    await new Promise((r) => setTimeout(r, 2));
    await store.append([recordOf(facts({ merchantId: 'globex', requestId: 'req_globex' }))], new Date());
  });

  it('pages through a filtered log with a cursor, newest first', async () => {
    const query = parseListRequestsQuery({ merchantId: 'acme', status: '5xx', limit: '20' });
    const first = await listRequests(deps, platform, query);
    expect(first.entries).toHaveLength(20);
    expect(first.entries[0]?.requestId).toBe('req_290');
    expect(first.entries.every((e) => e.status === 502)).toBe(true);
    const second = await listRequests(deps, platform, { ...query, cursor: first.nextCursor as string });
    expect(second.entries.map((e) => e.requestId)).toEqual([
      'req_90',
      'req_80',
      'req_70',
      'req_60',
      'req_50',
      'req_40',
      'req_30',
      'req_20',
      'req_10',
      'req_0',
    ]);
    expect(second.nextCursor).toBeNull();
  });

  it('finds a request by its id, key or path, and shows one entry in full', async () => {
    const byId = await listRequests(deps, platform, parseListRequestsQuery({ merchantId: 'acme', requestId: 'req_123' }));
    expect(byId.entries.map((e) => e.requestId)).toEqual(['req_123']);
    const byPath = await listRequests(deps, platform, parseListRequestsQuery({ merchantId: 'acme', path: '/v1/token/tok.123' }));
    expect(byPath.entries.map((e) => e.requestId)).toEqual(['req_123']);
    const byKey = await listRequests(deps, platform, parseListRequestsQuery({ merchantId: 'acme', keyId: 'key_odd', limit: '200' }));
    expect(byKey.entries).toHaveLength(150);
    const entry = await getRequest(deps, platform, 'acme', byId.entries[0]?.id as string);
    expect(entry).toMatchObject({ requestId: 'req_123', route: '/v1/token/:token', path: '/v1/token/tok.123', status: 404 });
  });

  it('keeps a merchant operator to its own merchant', async () => {
    const own = await listRequests(deps, { merchantId: 'globex' }, parseListRequestsQuery({}));
    expect(own.entries.map((e) => e.requestId)).toEqual(['req_globex']);
    await expect(listRequests(deps, { merchantId: 'globex' }, parseListRequestsQuery({ merchantId: 'acme' }))).rejects.toMatchObject({
      code: 'merchant_forbidden',
    });
    await expect(listRequests(deps, platform, parseListRequestsQuery({}))).rejects.toMatchObject({ code: 'parameter_missing' });
    await expect(getRequest(deps, { merchantId: 'globex' }, undefined, own.entries[0]?.id as string)).resolves.toBeDefined();
    await expect(getRequest(deps, platform, 'acme', own.entries[0]?.id as string)).rejects.toMatchObject({
      code: 'request_log_entry_not_found',
    });
  });

  it('refuses bad query parameters with the documented errors', () => {
    expect(() => parseListRequestsQuery({ status: '6xx' })).toThrow(
      expect.objectContaining({ code: 'parameter_invalid', param: 'status' }),
    );
    expect(() => parseListRequestsQuery({ limit: '0' })).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'limit' }));
    expect(() => parseListRequestsQuery({ from: 'yesterday' })).toThrow(expect.objectContaining({ param: 'from' }));
    expect(() => parseListRequestsQuery({ cursor: '1732372800000-0' })).toThrow(expect.objectContaining({ param: 'cursor' }));
    expect(() => parseListRequestsQuery({ status: ['2xx', '4xx'] })).toThrow(expect.objectContaining({ param: 'status' }));
    expect(() => parseListRequestsQuery({ colour: 'red' })).toThrow(expect.objectContaining({ code: 'parameter_unknown' }));
    expect(() => parseRequestStatsQuery({ hours: '25' })).toThrow(expect.objectContaining({ param: 'hours' }));
  });

  it('summarises the last hours per minute', async () => {
    const stats = await requestStats(deps, platform, parseRequestStatsQuery({ merchantId: 'acme', hours: '2' }));
    expect(stats.minutes).toHaveLength(120);
    expect(stats.totals).toMatchObject({ requests: 300, serverErrors: 30, clientErrors: 90 });
    expect(stats.totals.errorRate).toBeCloseTo(0.4, 4);
  });
});
