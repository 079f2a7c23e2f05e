import { Registry } from 'prom-client';
import { cardFingerprintKey, FAILED_SUBMISSIONS_PER_FORM_SESSION, type BrowserLimitReason } from '../domain/browserLimits';
import { MemoryDistinctCardCounter, type DistinctCardCounter } from '../store/distinctCardCounter';
import { MemoryRateLimitCounter, type RateLimitCounter } from '../store/rateLimitCounter';
import { captureLogger, TEST_PEPPER } from '../testing/fixtures';
import { BrowserTokenLimiter, browserRefusalCounter, type BrowserLimitConfig } from './browserLimits';

const VISA = '4242424242424242';
const MASTERCARD = '5555555555554444';
const AMEX = '378282246310005';

function limiter(
  config: Partial<BrowserLimitConfig>,
  stores: { counter?: RateLimitCounter; cards?: DistinctCardCounter } = {},
): { limiter: BrowserTokenLimiter; refused: BrowserLimitReason[]; logs: () => string } {
  const refused: BrowserLimitReason[] = [];
  const { logger, text } = captureLogger();
  return {
    limiter: new BrowserTokenLimiter({
      counter: stores.counter ?? new MemoryRateLimitCounter(),
      cards: stores.cards ?? new MemoryDistinctCardCounter(),
      config: {
        BROWSER_TOKENS_PER_KEY_PER_MINUTE: 0,
        BROWSER_TOKENS_PER_IP_PER_MINUTE: 0,
        BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: 0,
        ...config,
      },
      fingerprintKey: cardFingerprintKey(TEST_PEPPER),
      logger,
      onRefused: (reason) => refused.push(reason),
    }),
    refused,
    logs: text,
  };
}

describe('the card-testing limiter', () => {
  it('refuses a shopper IP past its per-minute limit, with a Retry-After within the minute, and not another IP', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_IP_PER_MINUTE: 2 });
    expect(await s.limiter.recordAttempt('key_1', '203.0.113.7', 'req')).toBeUndefined();
    expect(await s.limiter.recordAttempt('key_2', '203.0.113.7', 'req')).toBeUndefined();
    const refusal = await s.limiter.recordAttempt('key_3', '203.0.113.7', 'req');
    expect(refusal?.error).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(refusal?.error.message).toMatch(/from this network/);
    expect(refusal?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refusal?.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(await s.limiter.recordAttempt('key_1', '203.0.113.8', 'req')).toBeUndefined();
    expect(s.refused).toEqual(['ip']);
  });

  it('refuses a publishable key past its per-minute limit, whatever IPs the requests come from', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_KEY_PER_MINUTE: 2 });
    expect(await s.limiter.recordAttempt('key_1', '203.0.113.1', 'req')).toBeUndefined();
    expect(await s.limiter.recordAttempt('key_1', '203.0.113.2', 'req')).toBeUndefined();
    expect((await s.limiter.recordAttempt('key_1', '203.0.113.3', 'req'))?.error.message).toMatch(/publishable key/);
    expect(await s.limiter.recordAttempt('key_2', '203.0.113.3', 'req')).toBeUndefined();
    expect(s.refused).toEqual(['key']);
  });

  it('counts an IPv6 shopper per /64', async () => {
    const s = limiter({ BROWSER_TOKENS_PER_IP_PER_MINUTE: 1 });
    expect(await s.limiter.recordAttempt('key_1', '2001:db8:1:2::1', 'req')).toBeUndefined();
    expect(await s.limiter.recordAttempt('key_1', '2001:db8:1:2::2', 'req')).toBeDefined();
  });

  it('refuses a new card past the distinct-cards limit of an IP, but never the same card again', async () => {
    const s = limiter({ BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: 2 });
    expect(await s.limiter.admitCard(VISA, '203.0.113.7', 'req')).toBeUndefined();
    expect(await s.limiter.admitCard(MASTERCARD, '203.0.113.7', 'req')).toBeUndefined();
    const refusal = await s.limiter.admitCard(AMEX, '203.0.113.7', 'req');
    expect(refusal?.error.message).toMatch(/different cards/);
    expect(refusal?.retryAfterSeconds).toBeGreaterThan(3000);
    expect(refusal?.retryAfterSeconds).toBeLessThanOrEqual(3600);
    for (let i = 0; i < 5; i++) expect(await s.limiter.admitCard(VISA, '203.0.113.7', 'req')).toBeUndefined();
    expect(await s.limiter.admitCard(AMEX, '198.51.100.1', 'req')).toBeUndefined();
    expect(s.refused).toEqual(['distinct_cards']);
  });

  it('closes a form session to cards once it had the fixed number refused, for the rest of its life, and no other session', async () => {
    const s = limiter({});
    for (let i = 1; i < FAILED_SUBMISSIONS_PER_FORM_SESSION; i++) {
      expect(await s.limiter.recordRefusedCard('fs_a', 600_000, 'req')).toBeUndefined();
      expect(await s.limiter.formSessionClosed('fs_a', 'req')).toBeUndefined();
    }
    const closing = await s.limiter.recordRefusedCard('fs_a', 600_000, 'req');
    expect(closing?.error).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(closing?.retryAfterSeconds).toBeGreaterThan(590);
    expect(closing?.retryAfterSeconds).toBeLessThanOrEqual(600);
    expect(await s.limiter.formSessionClosed('fs_a', 'req')).toBeDefined();
    expect(await s.limiter.formSessionClosed('fs_b', 'req')).toBeUndefined();
    expect(s.refused).toEqual(['form_session_failures', 'form_session_failures']);
  });

  it('enforces nothing when every limit is 0', async () => {
    const s = limiter({});
    for (const number of [VISA, MASTERCARD, AMEX]) {
      expect(await s.limiter.recordAttempt('key_1', '203.0.113.7', 'req')).toBeUndefined();
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
      expect(await s.limiter.recordAttempt('key_1', '203.0.113.7', 'req')).toBeUndefined();
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
    expect(text).toMatch(/tessera_browser_tokens_refused_total\{reason="key"\} 0/);
    expect(text).toMatch(/tessera_browser_tokens_refused_total\{reason="form_session_failures"\} 0/);
  });
});
