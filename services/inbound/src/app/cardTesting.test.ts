import pino from 'pino';
import { Redis } from 'ioredis';
import { TesseraError } from '@tessera/common';
import { RedisDistinctCardCounter, RedisRateLimitCounter } from '@tessera/edge';
import { useRedisServer } from '@tessera/test-support';
import { cardTestingGuard, type CardTestingLimits } from './cardTesting';

const OWNER = { merchantId: 'acme', routeId: 'checkout' };

describe('the inbound card-testing limits', () => {
  const handle = useRedisServer((url) => new Redis(url));
  beforeEach(async () => {
    await handle.client.flushall();
  });
  const guard = (limits: Partial<CardTestingLimits>, refused: string[] = []) =>
    cardTestingGuard({
      counter: new RedisRateLimitCounter(handle.client),
      cards: new RedisDistinctCardCounter(handle.client),
      limits: {
        INBOUND_CARDS_PER_ROUTE_PER_MINUTE: 0,
        INBOUND_CARDS_PER_IP_PER_MINUTE: 0,
        INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR: 0,
        ...limits,
      },
      secret: 'a-secret-of-at-least-thirty-two-characters',
      logger: pino({ level: 'silent' }),
      onRefused: (reason) => refused.push(reason),
    });
  const outcome = (p: Promise<void>) =>
    p.then(
      () => 'admitted',
      (err: TesseraError) => `${err.code} ${err.retryAfterSeconds ?? ''}`.trim(),
    );

  it('refuses a client network past its requests with a card per minute, with Retry-After', async () => {
    const refused: string[] = [];
    const g = guard({ INBOUND_CARDS_PER_IP_PER_MINUTE: 2 }, refused);
    expect(await outcome(g.admitRequest(OWNER, '203.0.113.9', 'r'))).toBe('admitted');
    expect(await outcome(g.admitRequest(OWNER, '203.0.113.9', 'r'))).toBe('admitted');
    expect(await outcome(g.admitRequest(OWNER, '203.0.113.9', 'r'))).toMatch(/^rate_limited \d+$/);
    expect(await outcome(g.admitRequest(OWNER, '198.51.100.1', 'r'))).toBe('admitted');
    expect(refused).toEqual(['ip']);
  });

  it('refuses a route past its requests with a card per minute, whoever sends them', async () => {
    const g = guard({ INBOUND_CARDS_PER_ROUTE_PER_MINUTE: 1 });
    expect(await outcome(g.admitRequest(OWNER, '203.0.113.9', 'r'))).toBe('admitted');
    expect(await outcome(g.admitRequest(OWNER, '198.51.100.1', 'r'))).toMatch(/^rate_limited/);
    expect(await outcome(g.admitRequest({ merchantId: 'acme', routeId: 'other' }, '198.51.100.1', 'r'))).toBe('admitted');
  });

  it('refuses a new card past the distinct cards of a network in the hour; the same card again passes; no number is stored', async () => {
    const g = guard({ INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR: 1 });
    expect(await outcome(g.admitCard('4242424242424242', '2001:db8::1', 'r'))).toBe('admitted');
    expect(await outcome(g.admitCard('4242424242424242', '2001:db8::2', 'r'))).toBe('admitted');
    expect(await outcome(g.admitCard('5555555555554444', '2001:db8::3', 'r'))).toMatch(/^rate_limited/);
    const keys = await handle.client.keys('*');
    expect(keys).toEqual(['tessera:ratelimit:inbound:cards:2001:db8:0:0::/64']);
    expect(JSON.stringify(await handle.client.smembers(keys[0]!))).not.toMatch(/4242|5555/);
  });
});
