import { mayHoldCardNumber } from '@tessera/common';
import {
  BODY_TEMPLATE_MAX_CHARS,
  buildRequestLogRecord,
  buildRequestStats,
  countersOf,
  latencyBucket,
  matchesFilter,
  pathOf,
  percentileMs,
  storableBodyTemplate,
  type RequestFacts,
} from './requestLog';
import { aRequest } from '../testing/fixtures';

const facts = (overrides: Partial<RequestFacts> = {}): RequestFacts =>
  aRequest({ at: new Date('2026-11-23T14:02:03.456Z'), route: '/v1/proxy', path: '/v1/proxy', status: 200, ms: 12.345, ...overrides });

const proxyCall = {
  pspUrl: 'https://psp.example:8443/charges?card=4242424242424242',
  method: 'post',
  token: 'tok.abc',
  bodyTemplate: '{"number":"[CARD_NUMBER]","note":"4242 4242 4242 4242"}',
  headerNames: ['Authorization', 'X-4242424242424242'],
  pspStatus: 402,
  pspMs: 81.26,
};

describe('request log entries', () => {
  it('keeps a proxy call’s host, template and header names, with a card number typed into them masked', () => {
    const record = buildRequestLogRecord(facts({ proxy: proxyCall }));
    expect(record).toMatchObject({ at: '2026-11-23T14:02:03.456Z', route: '/v1/proxy', path: '/v1/proxy', status: 200, ms: 12.3 });
    expect(record).toEqual({
      ...buildRequestLogRecord(facts()),
      psp: {
        host: 'psp.example:8443',
        method: 'post',
        status: 402,
        ms: 81.3,
        token: 'tok.abc',
        bodyTemplate: '{"number":"[CARD_NUMBER]","note":"[redacted]"}',
        headerNames: ['Authorization', 'X-[redacted]'],
      },
    });
    expect(mayHoldCardNumber(JSON.stringify(record))).toBe(false);
  });

  it('stores a card number sent as the token or PSP host as "[card number]", not a masked copy', () => {
    const record = buildRequestLogRecord(
      facts({ proxy: { ...proxyCall, token: '4242-4242-4242-4242', pspUrl: 'https://4242424242424242.example/x' } }),
    );
    expect(record.psp).toMatchObject({ token: '[card number]', host: '[card number]' });
  });

  it('fills the route pattern with the path’s token, and nothing else of the URL', () => {
    expect(pathOf('/v1/token/:token', '/v1/token/tok.a%20b')).toBe('/v1/token/tok.a%20b');
    expect(pathOf('/v1/token/:token', '/v1/token/4242424242424242')).toBe('/v1/token/%5Bcard%20number%5D');
    expect(pathOf('/v1/token/:token/retain', '/v1/token/tok.x/retain')).toBe('/v1/token/tok.x/retain');
    expect(pathOf('/v1/proxy', '/v1/proxy')).toBe('/v1/proxy');
  });

  it('cuts a long template after masking, never leaving the first digits of a card number that crossed the cut', () => {
    const pan = '4242424242424242';
    const template = `${'a'.repeat(BODY_TEMPLATE_MAX_CHARS - 8)}"n":"${pan}"`;
    const { text, truncated } = storableBodyTemplate(template);
    expect(truncated).toBe(true);
    expect(text.length).toBeLessThanOrEqual(BODY_TEMPLATE_MAX_CHARS);
    expect(text).not.toMatch(/\d/);
    expect(storableBodyTemplate(`{"n":"${pan}"}`)).toEqual({ text: '{"n":"[redacted]"}', truncated: false });
  });

  it('matches filters on status class, route or path, key, request id and mode', () => {
    const entry = { id: 'x-0', ...buildRequestLogRecord(facts({ route: '/v1/token/:token', path: '/v1/token/tok.1', status: 404 })) };
    expect(matchesFilter(entry, { status: '4xx', path: '/v1/token/:token', keyId: 'key_1', requestId: 'req_1', mode: 'test' })).toBe(true);
    expect(matchesFilter(entry, { path: '/v1/token/tok.1' })).toBe(true);
    expect(matchesFilter(entry, { status: '2xx' })).toBe(false);
    expect(matchesFilter(entry, { path: '/v1/proxy' })).toBe(false);
    expect(matchesFilter(entry, { keyId: 'key_2' })).toBe(false);
    expect(matchesFilter(entry, { mode: 'live' })).toBe(false);
  });
});

describe('request statistics', () => {
  it('puts PSP times into buckets four to a doubling, read back at most 19 % high', () => {
    for (const ms of [0.2, 1, 1.5, 7, 80, 250, 1999, 30_000]) {
      const bucket = latencyBucket(ms);
      const upper = percentileMs(new Map([[bucket, 1]]), 0.5) ?? 0;
      expect(upper).toBeGreaterThanOrEqual(Math.max(1, ms) - 0.05);
      expect(upper).toBeLessThanOrEqual(Math.max(1, ms) * 1.19 + 0.1);
    }
  });

  it('reads p50 and p99 from the bucket counts', () => {
    const buckets = new Map<number, number>([
      [latencyBucket(10), 98],
      [latencyBucket(1000), 2],
    ]);
    expect(percentileMs(buckets, 0.5)).toBeGreaterThanOrEqual(10);
    expect(percentileMs(buckets, 0.5)).toBeLessThan(12);
    expect(percentileMs(buckets, 0.99)).toBeGreaterThanOrEqual(1000);
    expect(percentileMs(new Map(), 0.5)).toBeNull();
  });

  it('counts requests, 4xx, 5xx and PSP times per minute, as a dense series with totals', () => {
    const minute = Math.floor(Date.parse('2026-11-23T14:02:00Z') / 60_000);
    const ok = countersOf(buildRequestLogRecord(facts({ proxy: { ...proxyCall, pspStatus: 200, pspMs: 40 } })));
    const notFound = countersOf(buildRequestLogRecord(facts({ status: 404 })));
    const down = countersOf(buildRequestLogRecord(facts({ status: 502, proxy: { ...proxyCall, pspStatus: null, pspMs: null } })));
    const sum: Record<string, number> = {};
    for (const c of [ok, notFound, down]) for (const [k, v] of Object.entries(c)) sum[k] = (sum[k] ?? 0) + v;
    const stats = buildRequestStats(new Map([[minute + 1, sum]]), minute, minute + 3);
    expect(stats.minutes.map((m) => m.requests)).toEqual([0, 3, 0]);
    expect(stats.minutes[1]).toMatchObject({
      at: '2026-11-23T14:03:00.000Z',
      clientErrors: 1,
      serverErrors: 1,
      errorRate: 0.6667,
      pspCalls: 1,
    });
    expect(stats.minutes[1]?.pspP50Ms).toBeGreaterThanOrEqual(40);
    expect(stats.minutes[0]).toMatchObject({ errorRate: 0, pspP50Ms: null, pspP99Ms: null });
    expect(stats.totals).toMatchObject({ requests: 3, clientErrors: 1, serverErrors: 1, pspCalls: 1 });
    expect(stats.from).toBe('2026-11-23T14:02:00.000Z');
    expect(stats.to).toBe('2026-11-23T14:05:00.000Z');
  });
});
