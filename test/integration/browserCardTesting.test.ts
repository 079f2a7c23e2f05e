/**
 * Card-testing defence on POST /v1/browser/tokens through real gateways sharing one Redis: the
 * per-shopper-IP and distinct-cards-per-IP limits answer 429 with Retry-After; a publishable key's
 * volume refuses nobody but, past its threshold, makes every card cost a proof of work that grows
 * with the attack (issue 22, finding 3); all counted in the gateway's metrics without card data.
 * Plus the CORS rule: no secret-key route answers with any Access-Control-* header.
 *
 * The gateway trusts 127.0.0.1 as a proxy here, so X-Forwarded-For names the shopper's address.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  aCard,
  apiClient,
  type ManagedProcess,
  type ProofOfWorkChallenge,
  solveProofOfWork,
  TEST_CARDS,
  TEST_CVV,
  useStack,
} from './harness';

jest.setTimeout(90_000);

const FIELDS_ORIGIN = 'http://127.0.0.1:9';
const MERCHANT_ORIGIN = 'https://shop.example';
const PER_IP = 5;
const PER_KEY = 8;
const DISTINCT_CARDS = 2;
const CHALLENGE_BASE = 1_000;
const TTL_UNDER_ATTACK_SECONDS = 120;

const env = useStack({
  env: {
    FIELDS_ORIGIN,
    TRUSTED_PROXIES: '127.0.0.1/32',
    METRICS_PORT: '0',
    BROWSER_TOKENS_PER_IP_PER_MINUTE: String(PER_IP),
    BROWSER_TOKENS_PER_KEY_PER_MINUTE: String(PER_KEY),
    BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: String(DISTINCT_CARDS),
    BROWSER_CHALLENGE_BASE_NUMBER: String(CHALLENGE_BASE),
    BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS: String(TTL_UNDER_ATTACK_SECONDS),
  },
});

let replicaUrl: string;

beforeAll(async () => {
  replicaUrl = (await env.stack.startFieldsReplica()).baseUrl;
});

function publishableKey(merchant: string): string {
  return env.stack.createPublishableKey(merchant, [MERCHANT_ORIGIN]).apiKey;
}

/** The headers Tessera's card fields send: the fields Origin, the merchant page as parent, the shopper's IP via the proxy. */
function fieldsHeaders(key: string, shopperIp: string): Record<string, string> {
  return { 'x-api-key': key, origin: FIELDS_ORIGIN, 'x-tessera-parent-origin': MERCHANT_ORIGIN, 'x-forwarded-for': shopperIp };
}

/** What the card fields send, with a challenge solution when given. */
async function tokenize(
  key: string,
  shopperIp: string,
  number: string = TEST_CARDS.visa,
  baseUrl = env.stack.fieldsUrl,
  solution?: string,
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${baseUrl}/v1/browser/tokens`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...fieldsHeaders(key, shopperIp),
      ...(solution !== undefined ? { 'x-tessera-challenge': solution } : {}),
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

/** What the card fields do after `challenge_required`: ask for a challenge and solve it (the hashes it took: the card's cost). */
async function solvedChallenge(
  key: string,
  shopperIp: string,
): Promise<{ solution: string; hashes: number; maxnumber: number; required: boolean }> {
  const res = await fetch(`${env.stack.fieldsUrl}/v1/browser/challenge`, { headers: fieldsHeaders(key, shopperIp) });
  expect(res.status).toBe(200);
  // Same-origin only: the fields service answers no one CORS.
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  const challenge = (await res.json()) as ProofOfWorkChallenge;
  return { ...solveProofOfWork(challenge), maxnumber: challenge.maxnumber ?? 0, required: challenge.required === true };
}

function expectRateLimited(res: { status: number; headers: Headers; body: any }, minSeconds: number, maxSeconds: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get('x-tessera-error')).toBe('rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(minSeconds);
  expect(retryAfter).toBeLessThanOrEqual(maxSeconds);
  expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
  // The fields read the refusal as a same-origin answer: no CORS header, to anyone.
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
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

  it('counts no challenge request as a card, whatever its method (HEAD is answered by the GET route)', async () => {
    const key = publishableKey('shop-head');
    for (const method of ['GET', 'HEAD']) {
      for (let i = 0; i < PER_IP; i++) {
        const res = await fetch(`${env.stack.fieldsUrl}/v1/browser/challenge`, { method, headers: fieldsHeaders(key, '203.0.113.12') });
        expect(res.status).toBe(200);
      }
    }
    for (let i = 0; i < PER_IP; i++) expect((await tokenize(key, '203.0.113.12')).status).toBe(201);
  });

  it('keeps taking cards from a fresh address while 62 addresses attack one key, and makes each attacking card cost more work', async () => {
    const key = publishableKey('shop-attack');
    const secret = env.stack.createKey('shop-attack', 'test');
    const lifeOf = async (token: string): Promise<number> => {
      const record = (await apiClient(env.stack, secret.apiKey)('GET', `/v1/token/${token}`)).body;
      return (Date.parse(record.expiresAt) - Date.parse(record.createdAt)) / 1000;
    };
    const attackers = Array.from({ length: 62 }, (_, i) => `198.18.0.${i + 1}`);
    // Up to the threshold the key's cards cost nothing, and their tokens get the vault's full provisional life.
    const quiet: string[] = [];
    for (let i = 0; i < PER_KEY; i++) {
      const res = await tokenize(key, attackers[i]!);
      expect(res.status).toBe(201);
      quiet.push(res.body.token);
    }
    expect(await lifeOf(quiet[0]!)).toBeGreaterThan(TTL_UNDER_ATTACK_SECONDS);
    // Past it, a card without work is asked for work (never refused for the key's volume alone).
    const asked = await tokenize(key, attackers[PER_KEY]!);
    expect(asked.status).toBe(429);
    expect(asked.headers.get('x-tessera-error')).toBe('challenge_required');
    expect(asked.body.error).toMatchObject({ type: 'rate_limit_error', code: 'challenge_required' });
    expect(asked.headers.get('access-control-allow-origin')).toBeNull();
    // The attack: 62 addresses each solve and send three cards (within their per-address limit).
    const stages: Array<{ maxnumber: number; hashes: number }[]> = [];
    for (let round = 0; round < 3; round++) {
      const stage: { maxnumber: number; hashes: number }[] = [];
      for (const ip of attackers) {
        const work = await solvedChallenge(key, ip);
        expect(work.required).toBe(true);
        const res = await tokenize(key, ip, TEST_CARDS.visa, env.stack.fieldsUrl, work.solution);
        expect(res.status).toBe(201);
        // A solution is spent once.
        if (round === 0 && ip === attackers[0]) {
          expect((await tokenize(key, ip, TEST_CARDS.visa, env.stack.fieldsUrl, work.solution)).body.error.code).toBe('challenge_required');
        }
        stage.push({ maxnumber: work.maxnumber, hashes: work.hashes });
      }
      stages.push(stage);
    }
    const meanMaxnumber = (stage: { maxnumber: number }[]) => stage.reduce((sum, c) => sum + c.maxnumber, 0) / stage.length;
    // The work per card grows with the attack's volume: more than three times as much in its last stage as in its first.
    expect(meanMaxnumber(stages[2]!)).toBeGreaterThan(3 * meanMaxnumber(stages[0]!));
    const totalHashes = (stage: { hashes: number }[]) => stage.reduce((sum, c) => sum + c.hashes, 0);
    expect(totalHashes(stages[2]!)).toBeGreaterThan(totalHashes(stages[0]!));

    // A shopper from a fresh address still pays: asked for work, solves it (as the card fields do), gets the token.
    const shopper = '203.0.113.200';
    expect((await tokenize(key, shopper)).body.error.code).toBe('challenge_required');
    const work = await solvedChallenge(key, shopper);
    const paid = await tokenize(key, shopper, TEST_CARDS.mastercard, env.stack.fieldsUrl, work.solution);
    expect(paid.status).toBe(201);
    // Made under attack: it lives TTL_UNDER_ATTACK_SECONDS unless the merchant's server retains it.
    expect(await lifeOf(paid.body.token)).toBeLessThanOrEqual(TTL_UNDER_ATTACK_SECONDS);
    // An address refused by its own limit pays more for the same key than a fresh one.
    const noisy = attackers[0]!;
    expectRateLimited(await tokenize(key, noisy), 1, 60);
    expect((await solvedChallenge(key, noisy)).maxnumber).toBeGreaterThan((await solvedChallenge(key, '203.0.113.201')).maxnumber);
    // Another merchant's key is not affected at all.
    expect((await tokenize(publishableKey('shop-key-2'), shopper)).status).toBe(201);
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

  it("counts each refusal in the fields service's metrics by reason, with no key, IP or card in the labels", async () => {
    const [primary, replica] = await Promise.all([
      scrape(env.stack.fields!),
      scrape(env.stack.processes.filter((p) => p.name === 'fields')[1]!),
    ]);
    const total = (reason: string) => (refusals(primary, reason) ?? 0) + (refusals(replica, reason) ?? 0);
    expect(total('ip')).toBe(3);
    expect(total('challenge_required')).toBe(2);
    expect(total('challenge_invalid')).toBe(1);
    expect(total('distinct_cards')).toBe(2);
    // The key under attack is named by id (never the key), with the attempts made on it while under pressure.
    const attacked = (text: string) => text.split('\n').filter((l) => l.startsWith('tessera_browser_attack_requests_total{key_id="'));
    const attackLines = [...attacked(primary), ...attacked(replica)];
    expect(attackLines.length).toBeGreaterThan(0);
    expect(attackLines.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0)).toBeGreaterThan(186);
    for (const text of [primary, replica]) {
      const lines = text.split('\n').filter((l) => /^tessera_browser_(tokens_refused|attack_requests)_total/.test(l));
      expect(lines.join('\n')).not.toMatch(/203\.0\.113|198\.51\.100|198\.18\.|192\.0\.2|tpk_|4242|5555|shop-/);
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
        // The admin routes are the admin service's.
        const base = route.startsWith('/admin/') ? env.stack.adminUrl : env.stack.baseUrl;
        const answers = [
          await apiClient(env.stack, secret.apiKey, base)(method, route, body, { origin }),
          await apiClient(env.stack, undefined, base)('OPTIONS', route, undefined, {
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
