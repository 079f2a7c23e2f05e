/**
 * Card numbers a caller puts where none belongs (a token, a PSP host, a header name, an unknown
 * field, a request id, an Idempotency-Key, an admin parameter) are never echoed, logged or stored
 * (issue 11, finding 4). Every check scans with the literal text and with the one detector.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { AdminClient, loggedIn } from './adminClient';
import { aCard, apiClient, type ApiKey, useSharedStack } from './harness';
import { cardNumbersIn, SHAPES, SPACED_SHAPES } from './cardShapes';

/** Every shape, for the places that take free text (a token, a header value, a request id, a field name). */
const FREE_TEXT_SHAPES = [...SHAPES, ...SPACED_SHAPES];

jest.setTimeout(120_000);

const env = useSharedStack({ psp: true });
const acmeId = env.merchant('acme');
const hostyId = env.merchant('hosty');

/** Log lines of this stack that hold a shape, or anything the detector flags. */
function cardNumbersInLogs(): string[] {
  return env.stack
    .logs()
    .split('\n')
    .filter((line) => cardNumbersIn(line).length > 0);
}

/**
 * A key name with its random digests (hex or base64url, 32 characters or more, some of them letters)
 * blanked: now and then one holds a run of 12 or more decimal digits that passes Luhn by chance
 * (this test failed about one run in two on the session digests), which no caller put there.
 */
function withoutDigests(name: string): string {
  return name.replace(/[A-Za-z0-9_-]{32,}/g, (run) => (/[A-Za-z]/.test(run) ? '#' : run));
}

let acme: ApiKey;
let call: ReturnType<typeof apiClient>;
let token: string;
let platform: AdminClient;

beforeAll(async () => {
  acme = env.stack.createKey(acmeId);
  call = apiClient(env.stack, acme.apiKey);
  token = (await call('POST', '/v1/token', aCard())).body.token;
  env.stack.createOperator(`${env.merchant('ops')}@tessera.test`, 'correct horse battery staple', null);
  platform = await loggedIn(env.stack.adminUrl, `${env.merchant('ops')}@tessera.test`, 'correct horse battery staple');
});

it('does not keep a card number sent as the token in the detokenization audit, its admin API or the raw Redis stream', async () => {
  for (const shape of FREE_TEXT_SHAPES) {
    const res = await call('POST', '/v1/proxy', {
      method: 'post',
      token: shape,
      pspUrl: `${env.psp.url}/charge`,
      pspBody: '[CARD_NUMBER]',
    });
    expect(res.status).toBe(404);
    expect(cardNumbersIn(res.text)).toEqual([]);
  }
  let audit = await platform.call('GET', `/detokenizations?merchantId=${acmeId}`);
  for (let i = 0; i < 40 && audit.body.entries.length < FREE_TEXT_SHAPES.length; i++) {
    await new Promise((r) => setTimeout(r, 50));
    audit = await platform.call('GET', `/detokenizations?merchantId=${acmeId}`);
  }
  expect(audit.body.entries).toHaveLength(FREE_TEXT_SHAPES.length);
  expect(audit.body.entries.map((e: { token: string }) => e.token)).toEqual(FREE_TEXT_SHAPES.map(() => '[card number]'));
  expect(cardNumbersIn(audit.text)).toEqual([]);

  const redis = new Redis(env.redis.url);
  try {
    for (const key of [`tessera:detokenizations:{m:${acmeId}}`]) {
      const entries = await redis.xrange(key, '-', '+');
      expect(entries.length).toBeGreaterThanOrEqual(FREE_TEXT_SHAPES.length);
      // The field values; stream ids are millisecond times, which the detector may well flag.
      expect(cardNumbersIn(entries.flatMap(([, fields]) => fields).join('\n'))).toEqual([]);
    }
  } finally {
    redis.disconnect();
  }
});

it('keeps a card number in the pspUrl host out of the answer, the proxy log and the audit', async () => {
  // An allowlist refuses the host before any DNS lookup (the tests have no network); the proxy
  // still logs the refusal with the host, and the call is audited.
  expect((await platform.call('PUT', `/merchants/${hostyId}/psp-hosts`, { pspHosts: ['psp.example'] })).status).toBe(200);
  const hosty = apiClient(env.stack, env.stack.createKey(hostyId).apiKey);
  const hostyToken = (await hosty('POST', '/v1/token', aCard())).body.token;
  for (const shape of SHAPES) {
    for (const path of ['/v1/proxy', '/v1/proxy/dry-run']) {
      const res = await hosty('POST', path, {
        method: 'post',
        token: hostyToken,
        pspUrl: `http://${shape}.example/charge?card=${shape}`,
        pspBody: '{"n":"[CARD_NUMBER]"}',
      });
      expect(res.status).toBe(path === '/v1/proxy' ? 400 : 200);
      if (path === '/v1/proxy') expect(res.body.error.code).toBe('psp_destination_forbidden');
      expect(cardNumbersIn(res.text)).toEqual([]);
    }
  }
  // The proxy's own log line (the shared stack's processes write to files: logs() has them).
  expect(env.stack.logs()).toMatch(/"service":"proxy"[^\n]*psp exchange failed/);
  const audit = await platform.call('GET', `/detokenizations?merchantId=${hostyId}`);
  expect(audit.body.entries.length).toBeGreaterThan(0);
  expect(audit.body.entries.map((e: { pspHost: string }) => e.pspHost)).toContain('[card number]');
  expect(cardNumbersIn(audit.text)).toEqual([]);
});

it('does not echo a card number used as a PSP header name or value, in an error or a dry-run preview', async () => {
  for (const shape of FREE_TEXT_SHAPES) {
    const preview = await call('POST', '/v1/proxy/dry-run', {
      method: 'post',
      token,
      pspUrl: `${env.psp.url}/charge`,
      // A shape with spaces is no header name: a value only.
      pspHeaders: { ...(SHAPES.includes(shape) ? { [shape]: 'x' } : {}), 'X-Note': shape },
      pspBody: `{"note":"${shape}","n":"[CARD_NUMBER]"}`,
    });
    expect(preview.status).toBe(200);
    expect(cardNumbersIn(preview.text)).toEqual([]);
    // A name with a space is no HTTP token; a name with a bad value is refused too.
    for (const pspHeaders of [{ [`${shape} x`]: 'x' }, { [shape]: 'a\r\nb' }, { [shape]: 1 }]) {
      const res = await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/charge`, pspHeaders });
      expect(res.status).toBe(400);
      expect(cardNumbersIn(res.text)).toEqual([]);
    }
  }
});

it('does not echo a card number used as an unknown field name, on the public or the admin API', async () => {
  for (const shape of FREE_TEXT_SHAPES) {
    const answers = [
      await call('POST', '/v1/token', { ...aCard(), [shape]: 1 }),
      await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: env.psp.url, [shape]: 1 }),
      await platform.call('POST', '/keys', { merchantId: acmeId, mode: 'test', [shape]: 1 }),
      await platform.call('PUT', `/merchants/${acmeId}/psp-hosts`, { pspHosts: [], [shape]: 1 }),
      await new AdminClient(env.stack.adminUrl).call('POST', '/login', {
        email: `${env.merchant('ops')}@tessera.test`,
        password: 'x',
        [shape]: 1,
      }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('parameter_unknown');
      expect(res.body.error.param).toContain('[redacted]');
      expect(cardNumbersIn(res.text)).toEqual([]);
    }
  }
});

it('does not echo or store a card number given as an admin list entry (IP range, domain, PSP host)', async () => {
  for (const shape of SHAPES) {
    const answers = [
      await platform.call('POST', '/keys', { merchantId: acmeId, mode: 'test', allowedCidrs: [shape] }),
      await platform.call('POST', '/keys', { merchantId: acmeId, mode: 'test', allowedCidrs: [`${shape}/24`] }),
      await platform.call('POST', '/keys', { merchantId: acmeId, mode: 'test', allowedDomains: [`${shape}.example`] }),
      await platform.call('PUT', `/merchants/${acmeId}/psp-hosts`, { pspHosts: [`${shape}.example`] }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(cardNumbersIn(res.text)).toEqual([]);
    }
  }
  expect(cardNumbersIn((await platform.call('GET', `/merchants/${acmeId}/psp-hosts`)).text)).toEqual([]);
});

it('replaces a request id shaped like a card number with its own, in the answer and in every service log', async () => {
  for (const shape of FREE_TEXT_SHAPES) {
    for (const res of [
      await call('POST', '/v1/proxy', { method: 'post', token, pspUrl: `${env.psp.url}/charge` }, { 'x-request-id': shape }),
      await call('GET', '/v1/token/tok.unknown', undefined, { 'x-request-id': shape }),
      await platform.call('GET', '/keys', undefined, { 'x-request-id': shape }),
    ]) {
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(cardNumbersIn(res.text)).toEqual([]);
      expect(cardNumbersIn([...res.headers].join('\n'))).toEqual([]);
    }
  }
  // A request id that is not card-number-like is still the caller's.
  const kept = await call('GET', '/v1/token/tok.unknown', undefined, { 'x-request-id': 'order-1700000000001' });
  expect(kept.headers.get('x-request-id')).toBe('order-1700000000001');
});

it('does not put a card number used as an Idempotency-Key into a Redis key name, even hashed', async () => {
  const redis = new Redis(env.redis.url);
  try {
    for (const shape of FREE_TEXT_SHAPES) {
      const first = await call('POST', '/v1/token', aCard(), { 'idempotency-key': shape });
      const replay = await call('POST', '/v1/token', aCard(), { 'idempotency-key': shape });
      expect(first.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.token).toBe(first.body.token);
      expect(cardNumbersIn(first.text + [...first.headers].join('\n'))).toEqual([]);
    }
    const keys = await redis.keys('*');
    const names = keys.join('\n');
    expect(keys.filter((key) => cardNumbersIn(withoutDigests(key)).length > 0)).toEqual([]);
    expect(cardNumbersIn(withoutDigests(names))).toEqual([]);
    // The literal shapes, in the whole names, digests included.
    expect(FREE_TEXT_SHAPES.filter((shape) => names.includes(shape))).toEqual([]);
    // An unkeyed SHA-256 of a card number is reversible by trying every number: not in any name.
    for (const shape of FREE_TEXT_SHAPES) expect(names).not.toContain(createHash('sha256').update(shape).digest('base64url'));
  } finally {
    redis.disconnect();
  }
});

it('never wrote a card number shape into any service log', () => {
  expect(cardNumbersInLogs()).toEqual([]);
});
