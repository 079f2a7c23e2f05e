import { Registry } from 'prom-client';
import { solveProofOfWork } from '@tessera/test-support';
import { cardFingerprintKey, FAILED_SUBMISSIONS_PER_FORM_SESSION, type BrowserLimitReason } from '../domain/browserLimits';
import { RedisDistinctCardCounter, type DistinctCardCounter } from '../store/distinctCardCounter';
import { RedisRateLimitCounter, type RateLimitCounter } from '../store/rateLimitCounter';
import { TEST_PEPPER } from '../../../merchant-data/src/testing/fixtures';
import { captureLogger } from '../testing/logger';
import { letTimePass, useEdgeRedis } from '../testing/redis';
import { BrowserTokenLimiter, browserRefusalCounter, type BrowserLimitConfig } from './browserLimits';

const VISA = '4242424242424242';
const MASTERCARD = '5555555555554444';
const AMEX = '378282246310005';

const db = useEdgeRedis();
beforeEach(() => db.redis.flushall());

function limiter(
  config: Partial<BrowserLimitConfig>,
  stores: { counter?: RateLimitCounter; cards?: DistinctCardCounter; now?: () => number } = {},
): { limiter: BrowserTokenLimiter; refused: BrowserLimitReason[]; attacked: string[]; marked: string[]; logs: () => string } {
  const refused: BrowserLimitReason[] = [];
  const attacked: string[] = [];
  const marked: string[] = [];
  const { logger, text } = captureLogger();
  return {
    limiter: new BrowserTokenLimiter({
      counter: stores.counter ?? new RedisRateLimitCounter(db.redis),
      cards: stores.cards ?? new RedisDistinctCardCounter(db.redis),
      config: {
        BROWSER_TOKENS_PER_KEY_PER_MINUTE: 0,
        BROWSER_TOKENS_PER_IP_PER_MINUTE: 0,
        BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: 0,
        BROWSER_CHALLENGE_BASE_NUMBER: 100,
        BROWSER_CHALLENGE_MAX_NUMBER: 10_000,
        BROWSER_CHALLENGE_TTL_SECONDS: 60,
        BROWSER_ATTACK_COOLDOWN_SECONDS: 300,
        ...config,
      },
      fingerprintKey: cardFingerprintKey(TEST_PEPPER),
      challengeKey: 'challenge-hmac-key-challenge-hmac-key',
      logger,
      onRefused: (reason) => refused.push(reason),
      onAttackRequest: (keyId) => attacked.push(keyId),
      onAttackMarked: (keyId, attempts) => marked.push(`${keyId}:${attempts}`),
      ...(stores.now ? { now: stores.now } : {}),
    }),
    refused,
    attacked,
    marked,
    logs: text,
  };
}

/** An attempt without a solution; undefined when admitted. */
async function attempt(s: BrowserTokenLimiter, keyId: string, ip: string, solution?: string) {
  const admission = await s.recordAttempt(keyId, ip, solution, 'req');
  return admission.refusal;
}

/** Asks for a challenge as the card fields do and solves it. */
async function solved(s: BrowserTokenLimiter, keyId: string, ip: string) {
  const challenge = await s.issueChallenge(keyId, ip, 'req');
  return { ...solveProofOfWork(challenge), maxnumber: challenge.maxnumber, required: challenge.required };
}

describe('the card-testing limiter', () => {
  it('refuses a shopper IP past its per-minute limit, with a Retry-After within the minute, and not another IP', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_IP_PER_MINUTE: 2 });
    expect(await attempt(s.limiter, 'key_1', '203.0.113.7')).toBeUndefined();
    expect(await attempt(s.limiter, 'key_2', '203.0.113.7')).toBeUndefined();
    const refusal = await attempt(s.limiter, 'key_3', '203.0.113.7');
    expect(refusal).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(refusal?.message).toMatch(/from this network/);
    expect(refusal?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refusal?.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await attempt(s.limiter, 'key_1', '203.0.113.8')).toBeUndefined();
    expect(s.refused).toEqual(['ip']);
  });

  it('refuses nobody for a key past its threshold: it demands a proof of work, bound to key and network, spent once', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_KEY_PER_MINUTE: 2 });
    const before = await solved(s.limiter, 'key_1', '203.0.113.1');
    expect(before.required).toBe(false);
    expect(await attempt(s.limiter, 'key_1', '203.0.113.1')).toBeUndefined();
    expect(await attempt(s.limiter, 'key_1', '203.0.113.2')).toBeUndefined();
    // Under pressure: a fresh address without work is asked for it, not turned away.
    const asked = await attempt(s.limiter, 'key_1', '203.0.113.3');
    expect(asked).toMatchObject({ code: 'challenge_required', status: 429 });
    expect(asked?.retryAfterSeconds).toBe(1);
    const work = await solved(s.limiter, 'key_1', '203.0.113.3');
    expect(work.required).toBe(true);
    // Not from another network, not for another key (the other key is under no pressure: no work needed at all).
    expect((await attempt(s.limiter, 'key_1', '203.0.113.4', work.solution))?.message).toMatch(/another key or network/);
    expect(await attempt(s.limiter, 'key_2', '203.0.113.4', work.solution)).toBeUndefined();
    expect(await attempt(s.limiter, 'key_1', '203.0.113.3', work.solution)).toBeUndefined();
    // Spent: a replay is refused.
    expect((await attempt(s.limiter, 'key_1', '203.0.113.3', work.solution))?.code).toBe('challenge_required');
    expect((await attempt(s.limiter, 'key_1', '203.0.113.3', 'bm90IGpzb24='))?.code).toBe('challenge_required');
    expect(s.refused).toEqual(['challenge_required', 'challenge_invalid', 'challenge_invalid', 'challenge_invalid']);
    expect(new Set(s.attacked)).toEqual(new Set(['key_1']));
  });

  it("makes the work grow with the key's volume and double per refusal of the address, up to the ceiling", async () => {
    const s = limiter({ BROWSER_TOKENS_PER_KEY_PER_MINUTE: 2, BROWSER_TOKENS_PER_IP_PER_MINUTE: 3 });
    expect((await solved(s.limiter, 'key_1', '198.51.100.1')).maxnumber).toBe(100);
    for (let i = 0; i < 2; i++) expect(await attempt(s.limiter, 'key_1', `198.51.100.${10 + i}`)).toBeUndefined();
    expect((await solved(s.limiter, 'key_1', '198.51.100.1')).maxnumber).toBe(100);
    for (let i = 0; i < 2; i++) {
      const work = await solved(s.limiter, 'key_1', `198.51.100.${20 + i}`);
      expect(await attempt(s.limiter, 'key_1', `198.51.100.${20 + i}`, work.solution)).toBeUndefined();
    }
    // Twice the threshold: twice the work.
    expect((await solved(s.limiter, 'key_1', '198.51.100.1')).maxnumber).toBe(200);
    // An address refused by its own limit pays double per refusal.
    for (let i = 0; i < 3; i++) await attempt(s.limiter, 'key_2', '198.51.100.99');
    expect((await attempt(s.limiter, 'key_2', '198.51.100.99'))?.code).toBe('rate_limited');
    expect((await attempt(s.limiter, 'key_2', '198.51.100.99'))?.code).toBe('rate_limited');
    expect((await solved(s.limiter, 'key_1', '198.51.100.99')).maxnumber).toBe(800);
    expect((await solved(s.limiter, 'key_1', '198.51.100.1')).maxnumber).toBe(200);
  });

  it('refuses work bought while the key was quiet once its volume has outgrown it, this minute and the next', async () => {
    let now = 6_000_000; // the start of a clock minute
    const s = limiter({ BROWSER_TOKENS_PER_KEY_PER_MINUTE: 2 }, { now: () => now });
    // Bought in bulk at the quiet start of the minute, at the base difficulty.
    const cheap = [await solved(s.limiter, 'key_1', '203.0.113.5'), await solved(s.limiter, 'key_1', '203.0.113.5')];
    expect(cheap.map((c) => c.maxnumber)).toEqual([100, 100]);
    for (let i = 0; i < 2; i++) expect(await attempt(s.limiter, 'key_1', `198.51.100.${i}`)).toBeUndefined();
    // At the threshold the base still does: the first cheap solution is spent.
    expect(await attempt(s.limiter, 'key_1', '203.0.113.5', cheap[0]!.solution)).toBeUndefined();
    const fair = await solved(s.limiter, 'key_1', '198.51.100.9');
    expect(await attempt(s.limiter, 'key_1', '198.51.100.9', fair.solution)).toBeUndefined();
    // Twice the threshold: the second cheap one no longer pays for a card, and the address is not punished for it.
    const outgrown = await attempt(s.limiter, 'key_1', '203.0.113.5', cheap[1]!.solution);
    expect(outgrown).toMatchObject({ code: 'challenge_required', status: 429 });
    expect(outgrown?.message).toMatch(/less card-testing pressure/);
    expect((await solved(s.limiter, 'key_1', '203.0.113.5')).maxnumber).toBe(200);
    // The next minute starts at the last one's difficulty, not the base.
    now += 60_000;
    await letTimePass(db.redis, 60_000);
    const early = await solved(s.limiter, 'key_1', '203.0.113.5');
    expect(early.maxnumber).toBe(200);
    expect(await attempt(s.limiter, 'key_1', '203.0.113.5', early.solution)).toBeUndefined();
    expect(s.refused).toEqual(['challenge_required']);
  });

  it('refuses a solution whose signed difficulty was changed by the client', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_KEY_PER_MINUTE: 1 });
    expect(await attempt(s.limiter, 'key_1', '198.51.100.1')).toBeUndefined();
    const work = await solved(s.limiter, 'key_1', '203.0.113.5');
    const payload = JSON.parse(Buffer.from(work.solution, 'base64').toString('utf8')) as { salt: string };
    const raised = { ...payload, salt: payload.salt.replace(/([?&])d=\d+/, '$1d=10000') };
    expect(raised.salt).not.toBe(payload.salt);
    const refusal = await attempt(s.limiter, 'key_1', '203.0.113.5', Buffer.from(JSON.stringify(raised)).toString('base64'));
    expect(refusal?.message).toMatch(/not valid/);
    expect(s.refused).toEqual(['challenge_invalid']);
  });

  it('keeps demanding work for the cool-down after the key reached its threshold, and says so', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_KEY_PER_MINUTE: 1, BROWSER_ATTACK_COOLDOWN_SECONDS: 300 });
    expect(await s.limiter.attackState('key_1')).toEqual({ underAttack: false, endsInMs: 0 });
    expect(await attempt(s.limiter, 'key_1', '192.0.2.1')).toBeUndefined();
    expect((await s.limiter.attackState('key_1')).underAttack).toBe(true);
    await letTimePass(db.redis, 120_000); // the volume's minute is over, the attack mark is not
    expect((await attempt(s.limiter, 'key_1', '192.0.2.2'))?.code).toBe('challenge_required');
    await letTimePass(db.redis, 200_000);
    expect(await s.limiter.attackState('key_1')).toEqual({ underAttack: false, endsInMs: 0 });
    expect(await attempt(s.limiter, 'key_1', '192.0.2.2')).toBeUndefined();
  });

  it('tells once per cool-down that a key was marked under attack, not once per attempt', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_KEY_PER_MINUTE: 2, BROWSER_ATTACK_COOLDOWN_SECONDS: 300 });
    expect(await attempt(s.limiter, 'key_9', '192.0.2.1')).toBeUndefined();
    expect(s.marked).toEqual([]);
    expect(await attempt(s.limiter, 'key_9', '192.0.2.2')).toBeUndefined();
    expect(s.marked).toEqual(['key_9:2']);
    for (const ip of ['192.0.2.3', '192.0.2.4', '192.0.2.5']) await attempt(s.limiter, 'key_9', ip);
    expect(s.marked).toEqual(['key_9:2']);
  });

  it('counts an IPv6 shopper per /64', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_IP_PER_MINUTE: 1 });
    expect(await attempt(s.limiter, 'key_1', '2001:db8:1:2::1')).toBeUndefined();
    expect(await attempt(s.limiter, 'key_1', '2001:db8:1:2::2')).toBeDefined();
  });

  it('refuses a new card past the distinct-cards limit of an IP, but never the same card again', async () => {
    const s = limiter({ BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: 2 });
    expect(await s.limiter.admitCard(VISA, '203.0.113.7', 'req')).toBeUndefined();
    expect(await s.limiter.admitCard(MASTERCARD, '203.0.113.7', 'req')).toBeUndefined();
    const refusal = await s.limiter.admitCard(AMEX, '203.0.113.7', 'req');
    expect(refusal?.message).toMatch(/different cards/);
    expect(refusal?.retryAfterSeconds).toBeGreaterThan(3000);
    expect(refusal?.retryAfterSeconds).toBeLessThanOrEqual(3600);
    for (let i = 0; i < 5; i++) expect(await s.limiter.admitCard(VISA, '203.0.113.7', 'req')).toBeUndefined();
    expect(await s.limiter.admitCard(AMEX, '198.51.100.1', 'req')).toBeUndefined();
    expect(s.refused).toEqual(['distinct_cards']);
  });

  it('closes a form session to cards once it had the fixed number refused, for the rest of its life, and no other session', async () => {
    const s = limiter({});
    for (let i = 1; i < FAILED_SUBMISSIONS_PER_FORM_SESSION; i++) {
      expect(await s.limiter.recordRefusedCard('fs_a', 600_000, '203.0.113.7', 'req')).toBeUndefined();
      expect(await s.limiter.formSessionClosed('fs_a', 'req')).toBeUndefined();
    }
    const closing = await s.limiter.recordRefusedCard('fs_a', 600_000, '203.0.113.7', 'req');
    expect(closing).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(closing?.retryAfterSeconds).toBeGreaterThan(590);
    expect(closing?.retryAfterSeconds).toBeLessThanOrEqual(600);
    expect(await s.limiter.formSessionClosed('fs_a', 'req')).toBeDefined();
    expect(await s.limiter.formSessionClosed('fs_b', 'req')).toBeUndefined();
    expect(s.refused).toEqual(['form_session_failures', 'form_session_failures']);
  });

  it('enforces nothing when every limit is 0', async () => {
    const s = limiter({});
    for (const number of [VISA, MASTERCARD, AMEX]) {
      expect(await attempt(s.limiter, 'key_1', '203.0.113.7')).toBeUndefined();
      expect(await s.limiter.admitCard(number, '203.0.113.7', 'req')).toBeUndefined();
    }
  });

  it('fails open when its store cannot answer, and says so in the log without the card', async () => {
    const broken = new Error('connection lost');
    const s = limiter(
      { BROWSER_TOKENS_PER_IP_PER_MINUTE: 1, BROWSER_TOKENS_PER_KEY_PER_MINUTE: 1, BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: 1 },
      {
        counter: { hit: () => Promise.reject(broken), peek: () => Promise.reject(broken), unhit: () => Promise.reject(broken) },
        cards: { admit: () => Promise.reject(broken) },
      },
    );
    for (const number of [VISA, MASTERCARD]) {
      expect(await attempt(s.limiter, 'key_1', '203.0.113.7')).toBeUndefined();
      expect(await s.limiter.admitCard(number, '203.0.113.7', 'req')).toBeUndefined();
    }
    expect(s.logs()).toMatch(/failing open/);
    expect(s.logs()).not.toContain(VISA);
  });
});

describe('the card-testing refusal metric', () => {
  it('counts refusals by reason only, starting every reason at 0', async () => {
    const registry = new Registry();
    const count = browserRefusalCounter(registry);
    count('distinct_cards');
    count('distinct_cards');
    count('ip');
    const text = await registry.metrics();
    expect(text).toMatch(/tessera_browser_tokens_refused_total\{reason="distinct_cards"\} 2/);
    expect(text).toMatch(/tessera_browser_tokens_refused_total\{reason="ip"\} 1/);
    expect(text).toMatch(/tessera_browser_tokens_refused_total\{reason="challenge_required"\} 0/);
    expect(text).toMatch(/tessera_browser_tokens_refused_total\{reason="form_session_failures"\} 0/);
  });
});
