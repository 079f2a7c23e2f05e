/**
 * The merchant's request log on real services (issue 15, item 5): a mixed session of tokenize,
 * read, proxy and errors shows up in GET /admin/v1/requests with the right fields, filters,
 * pages, details and statistics; and no card number reaches the log, its admin API or the raw
 * Redis keys, whatever card-number shapes (the echo and fuzz tests' inputs) a caller puts where.
 */
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { loggedIn, type AdminClient } from './adminClient';
import { aCard, apiClient, type ApiKey, freePort, TEST_CARDS, useSharedStack } from './harness';
import { cardNumbersIn, cardShape, SHAPES, SPACED_SHAPES } from './cardShapes';

jest.setTimeout(180_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');
const globexId = env.merchant('globex');
const fencedId = env.merchant('fenced');

let acme: ApiKey;
let call: ReturnType<typeof apiClient>;
let platform: AdminClient;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every entry of a merchant's log, newest first, following the cursor. */
async function wholeLog(merchantId: string): Promise<any[]> {
  const entries: any[] = [];
  let cursor: string | null = null;
  do {
    const page = await platform.call('GET', `/requests?merchantId=${merchantId}&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    expect(cardNumbersIn(page.text)).toEqual([]);
    entries.push(...page.body.entries);
    cursor = page.body.nextCursor;
  } while (cursor !== null);
  return entries;
}

/** The log is written just after each answer: wait until it holds `count` entries. */
async function logOf(merchantId: string, count: number): Promise<any[]> {
  let entries = await wholeLog(merchantId);
  for (let i = 0; i < 100 && entries.length < count; i++) {
    await sleep(50);
    entries = await wholeLog(merchantId);
  }
  expect(entries).toHaveLength(count);
  return entries;
}

beforeAll(async () => {
  acme = env.stack.createKey(acmeId);
  call = apiClient(env.stack, acme.apiKey);
  env.stack.createOperator(`${env.merchant('ops')}@tessera.test`, 'correct horse battery staple', null);
  env.stack.createOperator(`${env.merchant('globex')}@tessera.test`, 'correct horse battery staple', globexId);
  platform = await loggedIn(env.stack.adminUrl, `${env.merchant('ops')}@tessera.test`, 'correct horse battery staple');
});

describe('a mixed session', () => {
  let token: string;
  let session: any[];
  let closedPort: number;

  beforeAll(async () => {
    env.psp.reply = (_req, res) => {
      res.writeHead(402, { 'content-type': 'application/json' });
      res.end('{"error":"card_declined"}');
    };
    const created = await call('POST', '/v1/token', aCard(), { 'x-request-id': 'order-1001' });
    expect(created.status).toBe(201);
    token = created.body.token;
    expect((await call('GET', `/v1/token/${token}`)).status).toBe(200);
    expect((await call('GET', '/v1/token/tok.unknown?secret=1')).status).toBe(404);
    expect((await call('POST', '/v1/token', aCard({ number: '4242424242424241' }))).status).toBe(400);
    const declined = await call('POST', '/v1/proxy', {
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/charges?merchant_ref=abc`,
      pspHeaders: { Authorization: 'Bearer sk_psp_secret_value', 'Content-Type': 'application/json' },
      pspBody: `{"card":"[CARD_NUMBER]","exp":"[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR]","note":"${TEST_CARDS.visa}"}`,
    });
    expect(declined.status).toBe(402);
    closedPort = await freePort();
    const unreachable = await call('POST', '/v1/proxy', {
      method: 'post',
      token,
      pspUrl: `http://127.0.0.1:${closedPort}/charges`,
      pspBody: '{}',
    });
    expect(unreachable.status).toBe(502);
    expect((await call('DELETE', `/v1/token/${token}`)).status).toBe(204);
    // Another merchant's request, and one with no key at all: neither is acme's.
    expect((await apiClient(env.stack, env.stack.createKey(globexId).apiKey)('GET', '/v1/token/tok.x')).status).toBe(404);
    expect((await apiClient(env.stack)('GET', '/v1/token/tok.x')).status).toBe(401);
    session = await logOf(acmeId, 7);
  });

  it('records every request of the merchant, newest first, with time, ids, route, status, error code and total time', () => {
    expect(session.map((e) => [e.method, e.path, e.status, e.code])).toEqual([
      ['DELETE', `/v1/token/${token}`, 204, null],
      ['POST', '/v1/proxy', 502, 'psp_unreachable'],
      ['POST', '/v1/proxy', 402, null],
      ['POST', '/v1/token', 400, 'card_number_invalid'],
      ['GET', '/v1/token/tok.unknown', 404, 'token_not_found'],
      ['GET', `/v1/token/${token}`, 200, null],
      ['POST', '/v1/token', 201, null],
    ]);
    for (const entry of session) {
      expect(entry).toMatchObject({ keyId: acme.id, mode: 'test', id: expect.any(String), requestId: expect.any(String) });
      expect(Date.parse(entry.at)).toBeGreaterThan(Date.now() - 120_000);
      expect(entry.ms).toBeGreaterThan(0);
    }
    expect(session[6]).toMatchObject({ route: '/v1/token', requestId: 'order-1001' });
    expect(session[5].route).toBe('/v1/token/:token');
  });

  it('records the PSP call of a proxy request: host, method, status and time, or no status when unreachable', () => {
    expect(session[2].psp).toEqual({ host: `127.0.0.1:${env.psp.port}`, method: 'POST', status: 402, ms: expect.any(Number) });
    expect(session[2].psp.ms).toBeGreaterThan(0);
    expect(session[2].psp.ms).toBeLessThanOrEqual(session[2].ms);
    expect(session[1].psp).toEqual({ host: `127.0.0.1:${closedPort}`, method: 'POST', status: null, ms: null });
  });

  it('shows an entry in full: the body template with its placeholders and header names, never the rendered body or header values', async () => {
    const detail = await platform.call('GET', `/requests/${session[2].id}?merchantId=${acmeId}`);
    expect(detail.status).toBe(200);
    expect(detail.body.psp).toEqual({
      host: `127.0.0.1:${env.psp.port}`,
      method: 'POST',
      status: 402,
      ms: session[2].psp.ms,
      token,
      bodyTemplate: '{"card":"[CARD_NUMBER]","exp":"[CARD_EXPIRY_MONTH]/[CARD_EXPIRY_YEAR]","note":"[redacted]"}',
      headerNames: ['Authorization', 'Content-Type'],
    });
    expect(detail.text).not.toContain('sk_psp_secret_value');
    expect(detail.text).not.toContain('merchant_ref');
    expect(cardNumbersIn(detail.text)).toEqual([]);
    // What the PSP really received held the card: the log holds the template only.
    expect(env.psp.requests.at(-1)?.body.toString()).toContain(TEST_CARDS.visa);
    expect((await platform.call('GET', `/requests/${session[2].id}?merchantId=${globexId}`)).status).toBe(404);
    expect((await platform.call('GET', `/requests/zz-0?merchantId=${acmeId}`)).body.error.code).toBe('request_log_entry_not_found');
  });

  it('filters by status class, path, key and request id, and pages with a cursor', async () => {
    const ids = async (query: string) =>
      (await platform.call('GET', `/requests?merchantId=${acmeId}&${query}`)).body.entries.map((e: any) => e.id);
    expect(await ids('status=4xx')).toEqual([session[2].id, session[3].id, session[4].id]);
    expect(await ids('status=5xx')).toEqual([session[1].id]);
    expect(await ids('path=/v1/proxy')).toEqual([session[1].id, session[2].id]);
    expect(await ids(`path=${encodeURIComponent('/v1/token/:token')}`)).toEqual([session[0].id, session[4].id, session[5].id]);
    expect(await ids('requestId=order-1001')).toEqual([session[6].id]);
    expect(await ids(`keyId=${acme.id}`)).toHaveLength(7);
    expect(await ids('keyId=key_other')).toEqual([]);
    const first = await platform.call('GET', `/requests?merchantId=${acmeId}&limit=3`);
    expect(first.body.entries.map((e: any) => e.id)).toEqual(session.slice(0, 3).map((e) => e.id));
    const second = await platform.call('GET', `/requests?merchantId=${acmeId}&limit=3&cursor=${first.body.nextCursor}`);
    expect(second.body.entries.map((e: any) => e.id)).toEqual(session.slice(3, 6).map((e) => e.id));
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await ids(`from=${encodeURIComponent(future)}`)).toEqual([]);
    const bad = await platform.call('GET', `/requests?merchantId=${acmeId}&status=6xx`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'status' });
  });

  it('counts requests per minute, the error rate and PSP latency over the last hours', async () => {
    const stats = await platform.call('GET', `/requests/stats?merchantId=${acmeId}&hours=1`);
    expect(stats.status).toBe(200);
    expect(stats.body.minutes).toHaveLength(60);
    // The PSP's 402 is a 4xx answer too.
    expect(stats.body.totals).toMatchObject({ requests: 7, clientErrors: 3, serverErrors: 1, pspCalls: 1 });
    expect(stats.body.totals.errorRate).toBeCloseTo(4 / 7, 3);
    expect(stats.body.totals.pspP50Ms).toBeGreaterThanOrEqual(session[2].psp.ms - 0.1);
    expect(stats.body.minutes.reduce((n: number, m: any) => n + m.requests, 0)).toBe(7);
  });

  it('shows a merchant operator its own log only, and nobody without a session', async () => {
    const globex = await loggedIn(env.stack.adminUrl, `${env.merchant('globex')}@tessera.test`, 'correct horse battery staple');
    const own = await globex.call('GET', '/requests');
    expect(own.status).toBe(200);
    expect(own.body.entries.map((e: any) => e.path)).toEqual(['/v1/token/tok.x']);
    expect((await globex.call('GET', `/requests?merchantId=${acmeId}`)).body.error.code).toBe('merchant_forbidden');
    expect((await globex.call('GET', `/requests/${session[0].id}?merchantId=${acmeId}`)).status).toBe(403);
    const anonymous = await fetch(`${env.stack.adminUrl}/admin/v1/requests?merchantId=${acmeId}`);
    expect(anonymous.status).toBe(401);
  });
});

describe('card numbers in the request log', () => {
  it('keeps none of the echo tests’ card-number shapes, wherever a caller puts them', async () => {
    const fenced = env.stack.createKey(fencedId);
    // Only the recording PSP: a card-number host is refused before any DNS lookup (the tests have no network).
    env.stack.cli(['psp-hosts', 'set', '--merchant', fencedId, '127.0.0.1']);
    const send = apiClient(env.stack, fenced.apiKey);
    const fencedToken = (await send('POST', '/v1/token', aCard())).body.token;
    let sent = 1;
    for (const shape of SHAPES) {
      const proxyBody = {
        method: 'post',
        token: fencedToken,
        pspUrl: `${env.psp.url}/charge/${shape}?card=${shape}`,
        pspHeaders: { [shape]: 'x', 'X-Note': shape },
        pspBody: `{"n":"[CARD_NUMBER]","typed":"${shape}","alone":${shape.replace(/\D/g, '')}}`,
      };
      const answers = [
        await send('POST', '/v1/proxy', proxyBody, { 'x-request-id': shape }),
        await send('POST', '/v1/proxy', { ...proxyBody, pspHeaders: { 'X-Note': 'x' } }, { 'idempotency-key': shape }),
        await send('POST', '/v1/proxy/dry-run', proxyBody),
        await send('POST', '/v1/proxy', { ...proxyBody, token: shape }),
        await send('POST', '/v1/proxy', { ...proxyBody, pspUrl: `http://${shape.replace(/\D/g, '')}.example/x` }),
        await send('GET', `/v1/token/${encodeURIComponent(shape)}`),
        await send('POST', '/v1/token', { ...aCard(), [shape]: 1 }),
      ];
      sent += answers.length;
    }
    // Shapes with spaces and commas fit no URL or header name: in free text only.
    for (const shape of SPACED_SHAPES) {
      const proxyBody = {
        method: 'post',
        token: fencedToken,
        pspUrl: `${env.psp.url}/charge`,
        pspHeaders: { 'X-Note': shape },
        pspBody: `{"n":"[CARD_NUMBER]","typed":"${shape}","alone":${shape.replace(/\D/g, '')}}`,
      };
      const answers = [
        await send('POST', '/v1/proxy', proxyBody, { 'x-request-id': shape }),
        await send('POST', '/v1/proxy', proxyBody, { 'idempotency-key': shape }),
        await send('POST', '/v1/proxy/dry-run', proxyBody),
        await send('POST', '/v1/proxy', { ...proxyBody, token: shape }),
        await send('POST', '/v1/token', { ...aCard(), [shape]: 1 }),
      ];
      sent += answers.length;
    }
    // The fuzz tests' generator: shapes in the template, a header name, the token and the path.
    await fc.assert(
      fc.asyncProperty(cardShape, fc.constantFrom('template', 'header', 'token', 'path'), async (shape, where) => {
        sent++;
        if (where === 'path') return void (await send('DELETE', `/v1/token/${encodeURIComponent(shape)}`));
        await send('POST', '/v1/proxy/dry-run', {
          method: 'post',
          token: where === 'token' ? shape : fencedToken,
          pspUrl: `${env.psp.url}/charge`,
          ...(where === 'header' ? { pspHeaders: { [`X-${shape}`]: 'v' } } : {}),
          pspBody: where === 'template' ? `amount=100&pan=${shape}&card=[CARD_NUMBER]` : '{}',
        });
      }),
      { numRuns: 60 },
    );

    const log = await logOf(fencedId, sent);
    const details = await Promise.all(log.map((e) => platform.call('GET', `/requests/${e.id}?merchantId=${fencedId}`)));
    for (const detail of details) {
      expect(detail.status).toBe(200);
      expect(cardNumbersIn(detail.text)).toEqual([]);
    }
    // The shapes did reach the log, masked: the scan above looked at entries that held them.
    const templates = details.map((d) => d.body.psp?.bodyTemplate ?? '');
    expect(templates.filter((t) => t.includes('"typed":"[redacted]","alone":[redacted]'))).toHaveLength(
      SHAPES.length * 5 + SPACED_SHAPES.length * 4,
    );
    expect(details.map((d) => d.body.psp?.token)).toContain('[card number]');
    expect(details.map((d) => d.body.path)).toContain('/v1/token/%5Bcard%20number%5D');

    const redis = new Redis(env.redis.url);
    try {
      const stream = await redis.xrange(`tessera:request-log:{m:${fencedId}}`, '-', '+');
      expect(stream).toHaveLength(sent);
      // The field values; stream ids are millisecond times, which the detector may well flag.
      expect(cardNumbersIn(stream.flatMap(([, fields]) => fields).join('\n'))).toEqual([]);
      const statsKeys = (await redis.keys(`tessera:request-stats:{m:${fencedId}}:*`)).sort();
      expect(statsKeys.length).toBeGreaterThan(0);
      for (const key of statsKeys) expect(cardNumbersIn(JSON.stringify(await redis.hgetall(key)))).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
