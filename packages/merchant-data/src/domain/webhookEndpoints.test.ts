import {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  enabledEvents,
  newWebhookEndpointId,
  rotatedSecrets,
  secretOverlapSeconds,
  signingGenerations,
  WEBHOOK_ENDPOINT_ID_PATTERN,
  webhookSecret,
  webhookUrl,
} from './webhookEndpoints';

const NOW = new Date('2026-11-26T12:00:00Z');
const PEPPER = 'p'.repeat(32);

describe('webhook endpoint rules', () => {
  it('makes ids of the documented form', () => {
    expect(newWebhookEndpointId()).toMatch(WEBHOOK_ENDPOINT_ID_PATTERN);
    expect(newWebhookEndpointId()).not.toBe(newWebhookEndpointId());
  });

  it('derives a different whsec_ secret per merchant, mode, endpoint and generation, stable for the same inputs', () => {
    const base = webhookSecret(PEPPER, 'm1', 'test', 'we_a', 1);
    expect(base).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(webhookSecret(PEPPER, 'm1', 'test', 'we_a', 1)).toBe(base);
    for (const other of [
      webhookSecret(PEPPER, 'm2', 'test', 'we_a', 1),
      webhookSecret(PEPPER, 'm1', 'live', 'we_a', 1),
      webhookSecret(PEPPER, 'm1', 'test', 'we_b', 1),
      webhookSecret(PEPPER, 'm1', 'test', 'we_a', 2),
      webhookSecret('q'.repeat(32), 'm1', 'test', 'we_a', 1),
    ]) {
      expect(other).not.toBe(base);
    }
  });

  it('rotates with an overlap: both generations sign until the old one expires', () => {
    const first = [{ generation: 1, expiresAt: null }];
    const second = rotatedSecrets(first, NOW, 3600);
    expect(second).toEqual([
      { generation: 2, expiresAt: null },
      { generation: 1, expiresAt: '2026-11-26T13:00:00.000Z' },
    ]);
    expect(signingGenerations(second, NOW).map((s) => s.generation)).toEqual([2, 1]);
    expect(signingGenerations(second, new Date('2026-11-26T13:00:00Z')).map((s) => s.generation)).toEqual([2]);
    // A rotation with no overlap drops the old secret at once; expired ones are not kept.
    expect(rotatedSecrets(second, NOW, 0)).toEqual([
      { generation: 3, expiresAt: null },
      { generation: 1, expiresAt: '2026-11-26T13:00:00.000Z' },
    ]);
    expect(rotatedSecrets(second, new Date('2026-11-27T00:00:00Z'), 0)).toEqual([{ generation: 3, expiresAt: null }]);
  });

  it('reads expiresInSeconds: 0..7 days, default 24 h', () => {
    expect(secretOverlapSeconds(undefined)).toBe(DEFAULT_SECRET_OVERLAP_SECONDS);
    expect(secretOverlapSeconds(0)).toBe(0);
    expect(secretOverlapSeconds(7 * 24 * 3600)).toBe(7 * 24 * 3600);
    for (const bad of [-1, 7 * 24 * 3600 + 1, 1.5, '60', null]) expect(secretOverlapSeconds(bad)).toHaveProperty('error');
  });

  it.each([
    ['https://shop.example/hooks', 'live', 'https://shop.example/hooks'],
    ['https://shop.example:8443/hooks?x=1', 'live', 'https://shop.example:8443/hooks?x=1'],
    ['http://127.0.0.1:4000/hooks', 'test', 'http://127.0.0.1:4000/hooks'],
    ['HTTPS://Shop.Example/hooks', 'test', 'https://shop.example/hooks'],
  ] as const)('accepts %s for a %s key', (raw, mode, url) => {
    expect(webhookUrl(raw, mode)).toEqual({ url });
  });

  it.each([
    ['http://shop.example/hooks', 'live', /https:\/\/ for a live key/],
    ['ftp://shop.example/hooks', 'test', /http\(s\)/],
    ['https://user:pw@shop.example/hooks', 'test', /user name or password/],
    ['https://@shop.example/hooks', 'test', /user name or password/],
    ['https://shop.example/hooks#x', 'test', /fragment/],
    ['https://shop.example/ho oks', 'test', /plain ASCII/],
    ['https://shop.example\\hooks', 'test', /plain ASCII/],
    ['https:shop.example/hooks', 'test', /absolute/],
    ['not a url', 'test', /plain ASCII|not a valid URL/],
    ['', 'test', /characters/],
    [42, 'test', /characters/],
    ['https://shop.example/' + 'a'.repeat(2048), 'test', /characters/],
  ] as const)('refuses %s for a %s key', (raw, mode, message) => {
    const result = webhookUrl(raw, mode);
    expect(result).toHaveProperty('error');
    expect((result as { error: string }).error).toMatch(message);
  });

  it('accepts known event types or "*" alone, and refuses anything else naming it', () => {
    expect(enabledEvents(['token.created', 'form_session.completed'])).toEqual({ events: ['token.created', 'form_session.completed'] });
    expect(enabledEvents(['*'])).toEqual({ events: ['*'] });
    expect(enabledEvents(['*', 'token.created'])).toEqual({ error: '"*" must stand alone' });
    expect(enabledEvents([])).toHaveProperty('error');
    expect(enabledEvents('token.created')).toHaveProperty('error');
    // An unknown type is named in the error, never a card number typed there.
    const typed = enabledEvents(['4242 4242 4242 4242']);
    expect(typed).toHaveProperty('error');
    expect(JSON.stringify(typed)).not.toMatch(/4242\D?4242\D?4242/);
    expect((enabledEvents(['token.created', 'token.exploded']) as { error: string }).error).toMatch(
      /"token.exploded" is not an event type/,
    );
    expect(enabledEvents(['token.created', 'token.created'])).toEqual({ error: 'must not repeat a type' });
  });
});
