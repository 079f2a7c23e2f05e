/**
 * Card-testing defence on POST /v1/browser/tokens through real gateways sharing one Redis: the
 * per-shopper-IP and per-publishable-key limits and the distinct-cards-per-IP limit answer 429
 * with Retry-After, and are counted in the gateway's metrics by reason only. Plus the CORS rule:
 * no secret-key route answers with any Access-Control-* header.
 *
 * The gateway trusts 127.0.0.1 as a proxy here, so X-Forwarded-For names the shopper's address.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { aCard, apiClient, type ManagedProcess, TEST_CARDS, TEST_CVV, useStack } from './harness';

jest.setTimeout(90_000);

const FIELDS_ORIGIN = 'http://127.0.0.1:9';
const MERCHANT_ORIGIN = 'https://shop.example';
const PER_IP = 5;
const PER_KEY = 8;
const DISTINCT_CARDS = 2;

const env = useStack({
  env: {
    FIELDS_ORIGIN,
    TRUSTED_PROXIES: '127.0.0.1/32',
    METRICS_PORT: '0',
    BROWSER_TOKENS_PER_IP_PER_MINUTE: String(PER_IP),
    BROWSER_TOKENS_PER_KEY_PER_MINUTE: String(PER_KEY),
    BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: String(DISTINCT_CARDS),
  },
});

let replicaUrl: string;

beforeAll(async () => {
  replicaUrl = (await env.stack.startGatewayReplica()).baseUrl;
});

function publishableKey(merchant: string): string {
  const out = env.stack.cli([
    'create',
    '--kind',
    'publishable',
    '--merchant',
    merchant,
    '--mode',
    'test',
    '--json',
    '--origin',
    MERCHANT_ORIGIN,
  ]);
  return (JSON.parse(out.trim().split('\n').pop() ?? '') as { apiKey: string }).apiKey;
}

/** What Tessera's card fields send: the fields Origin, the merchant page as parent, the shopper's IP via the proxy. */
async function tokenize(
  key: string,
  shopperIp: string,
  number: string = TEST_CARDS.visa,
  baseUrl = env.stack.baseUrl,
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${baseUrl}/v1/browser/tokens`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': key,
      origin: FIELDS_ORIGIN,
      'x-tessera-parent-origin': MERCHANT_ORIGIN,
      'x-forwarded-for': shopperIp,
    },
    body: JSON.stringify({
      number,
      expiryMonth: 12,
      expiryYear: new Date().getUTCFullYear() + 3,
      cvv: number.length === 15 ? '0461' : TEST_CVV,
    }),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

function expectRateLimited(res: { status: number; headers: Headers; body: any }, minSeconds: number, maxSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get('x-tessera-error')).toBe('rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(minSeconds);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
  // CORS still lets the fields read the refusal (and its Retry-After is the message's wait).
  expect(res.headers.get('access-control-allow-origin')).toBe(FIELDS_ORIGIN);
}

async function scrape(service: ManagedProcess): Promise<string> {
  const url = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(service.output)?.[1];
  if (url === undefined) throw new Error(`${service.name} logged no metrics URL`);
  return (await fetch(url)).text();
}

function refusals(metrics: string, reason: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith('tessera_browser_tokens_refused_total{') && l.includes(`reason="${reason}"`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('card-testing limits on browser tokenization', () => {
  it('refuses a shopper IP past its per-minute limit with 429 and Retry-After, and leaves other shoppers alone', async () => {
    const key = publishableKey('shop-ip');
    for (let i = 0; i < PER_IP; i++) expect((await tokenize(key, '203.0.113.10')).status).toBe(201);
    expectRateLimited(await tokenize(key, '203.0.113.10'), 1, 60);
    expectRateLimited(await tokenize(publishableKey('shop-ip-2'), '203.0.113.10'), 1, 60);
    expect((await tokenize(key, '203.0.113.11')).status).toBe(201);
  });

  it('refuses a publishable key past its per-minute limit, however many shopper IPs it is spread over', async () => {
    const key = publishableKey('shop-key');
    for (let i = 0; i < PER_KEY; i++) expect((await tokenize(key, `198.51.100.${i + 1}`)).status).toBe(201);
    expectRateLimited(await tokenize(key, '198.51.100.200'), 1, 60);
    expect((await tokenize(publishableKey('shop-key-2'), '198.51.100.200')).status).toBe(201);
  });

  it('refuses a new card past the distinct-cards limit of a shopper IP across gateway replicas, but not the same card again', async () => {
    const key = publishableKey('shop-cards');
    const ip = '192.0.2.77';
    expect((await tokenize(key, ip, TEST_CARDS.visa)).status).toBe(201);
    expect((await tokenize(key, ip, TEST_CARDS.mastercard, replicaUrl)).status).toBe(201);
    // A third different card: refused for the rest of the hour, on either replica.
    expectRateLimited(await tokenize(key, ip, TEST_CARDS.amex, replicaUrl), 61, 3600);
    expectRateLimited(await tokenize(key, ip, TEST_CARDS.visaDeclined), 61, 3600);
    // The shopper's own card again is no card testing.
    expect((await tokenize(key, ip, TEST_CARDS.visa, replicaUrl)).status).toBe(201);
    // Another shopper may use the refused card.
    expect((await tokenize(key, '192.0.2.78', TEST_CARDS.amex)).status).toBe(201);
  });

  it('leaves the card number and its unkeyed hash out of Redis', async () => {
    const cli = (args: string[]) =>
      execFileSync('redis-cli', ['-u', env.redis.url, '--no-auth-warning', ...args], { encoding: 'utf8' })
        .trim()
        .split('\n');
    const keys = cli(['--scan', '--pattern', 'tessera:ratelimit:browser:cards:*']);
    expect(keys).toContain('tessera:ratelimit:browser:cards:192.0.2.77');
    const members = cli(['smembers', 'tessera:ratelimit:browser:cards:192.0.2.77']);
    expect(members).toHaveLength(DISTINCT_CARDS);
    const unkeyed = ['sha256', 'sha1', 'md5'].flatMap((a) => {
      const digest = createHash(a).update(TEST_CARDS.visa).digest();
      return [digest.toString('hex'), digest.toString('base64url'), digest.toString('base64url').slice(0, 22)];
    });
    for (const member of members) {
      expect(member).not.toMatch(/\d{6,}/);
      expect(unkeyed).not.toContain(member);
    }
  });

  it("counts each refusal in the gateway's metrics by reason, with no key, IP or card in the labels", async () => {
    const [primary, replica] = await Promise.all([
      scrape(env.stack.gateway),
      scrape(env.stack.processes.filter((p) => p.name === 'gateway')[1]!),
    ]);
    const total = (reason: string) => (refusals(primary, reason) ?? 0) + (refusals(replica, reason) ?? 0);
    expect(total('ip')).toBe(2);
    expect(total('key')).toBe(1);
    expect(total('distinct_cards')).toBe(2);
    for (const text of [primary, replica]) {
      const lines = text.split('\n').filter((l) => l.startsWith('tessera_browser_tokens_refused_total'));
      expect(lines.join('\n')).not.toMatch(/203\.0\.113|198\.51\.100|192\.0\.2|tpk_|4242|shop-/);
    }
  });
});

describe('CORS on secret-key routes', () => {
  it('sends no Access-Control-* header on any secret-key or admin route, preflights included, even to the fields origin', async () => {
    const secret = env.stack.createKey('shop-cors', 'test');
    const created = await apiClient(env.stack, secret.apiKey)('POST', '/v1/token', aCard());
    expect(created.status).toBe(201);
    const token = created.body.token as string;
    const routes: Array<[string, string, unknown]> = [
      ['POST', '/v1/token', aCard()],
      ['GET', `/v1/token/${token}`, undefined],
      ['POST', `/v1/token/${token}/retain`, undefined],
      ['POST', '/v1/proxy/dry-run', { method: 'post', token, pspUrl: 'https://psp.example/c', pspBody: '[CARD_NUMBER]' }],
      ['POST', '/v1/proxy', {}],
      ['DELETE', `/v1/token/${token}`, undefined],
      ['GET', '/admin/v1/keys', undefined],
      ['POST', '/admin/v1/login', { email: 'x@example.test', password: 'not-the-password' }],
    ];
    for (const origin of [FIELDS_ORIGIN, MERCHANT_ORIGIN]) {
      for (const [method, route, body] of routes) {
        const answers = [
          await apiClient(env.stack, secret.apiKey)(method, route, body, { origin }),
          await apiClient(env.stack)('OPTIONS', route, undefined, {
            origin,
            'access-control-request-method': method,
            'access-control-request-headers': 'content-type, x-api-key',
          }),
        ];
        for (const res of answers) {
          const cors = [...res.headers.keys()].filter((name) => name.startsWith('access-control-'));
          expect({ method, route, origin, cors }).toEqual({ method, route, origin, cors: [] });
        }
      }
    }
  });
});
