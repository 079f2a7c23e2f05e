import crypto from 'node:crypto';
import { FormSessionReturnError, formSessionReturnPayload, verifyFormSessionReturn } from './formSessions';

const SECRET = 'fss_test_' + 'k'.repeat(43);
const SESSION = 'fs_' + 'A'.repeat(32);
const NOW = new Date('2026-11-23T12:00:00Z');
const TS = Math.floor(NOW.getTime() / 1000);

/**
 * A return URL as Tessera sends it, signed here independently of the SDK's own helpers: HMAC-SHA256
 * over a label and the URL with its query parameters sorted by name, `signature` left out.
 */
function signedUrl(query: string, outcome: Record<string, string>, secret = SECRET, base = 'https://shop.test/done'): string {
  const params = new URLSearchParams(query);
  for (const [name, value] of Object.entries(outcome)) params.set(name, value);
  const sorted = new URLSearchParams([...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const signature = crypto
    .createHmac('sha256', secret)
    .update(`tessera form-session return v2\n${base}?${sorted.toString()}`)
    .digest('hex');
  params.set('signature', signature);
  return `${base}?${params.toString()}`;
}

const completed = { session: SESSION, status: 'completed', timestamp: String(TS) };
const verify = (url: string | URL, options: Partial<Parameters<typeof verifyFormSessionReturn>[1]> = {}) =>
  verifyFormSessionReturn(url, { signingSecret: SECRET, now: NOW, ...options });

describe('verifyFormSessionReturn', () => {
  it('accepts a redirect signed with the merchant’s secret and hands back the outcome and the merchant’s own query', () => {
    const result = verify(signedUrl('order=42&amount=1', completed));
    expect(result).toMatchObject({ sessionId: SESSION, status: 'completed', signedAt: new Date(TS * 1000) });
    expect([...result.query]).toEqual([
      ['order', '42'],
      ['amount', '1'],
    ]);
  });

  it.each([
    ['a changed amount', (url: URL) => url.searchParams.set('amount', '1000')],
    ['a changed order', (url: URL) => url.searchParams.set('order', '43')],
    ['an added parameter', (url: URL) => url.searchParams.append('discount', '100')],
    ['a removed parameter', (url: URL) => url.searchParams.delete('amount')],
    ['a repeated parameter', (url: URL) => url.searchParams.append('order', '42')],
    ['a changed status', (url: URL) => url.searchParams.set('status', 'canceled')],
    ['another path', (url: URL) => void (url.pathname = '/done/other')],
    ['another host', (url: URL) => void (url.host = 'evil.test')],
    ['another scheme', (url: URL) => void (url.protocol = 'http:')],
  ])('refuses a redirect with %s', (_what, tamper) => {
    const url = new URL(signedUrl('order=42&amount=1', completed));
    tamper(url);
    expect(() => verify(url)).toThrow(FormSessionReturnError);
  });

  it('refuses a repeated signature, session or status however the framework would read it', () => {
    const good = signedUrl('order=42', completed);
    expect(() => verify(`${good}&signature=${'0'.repeat(64)}`)).toThrow(/"signature" is repeated/);
    expect(() => verify(`${good}&status=canceled`)).toThrow(/"status" is repeated/);
  });

  it('verifies another spelling of the same query: names in another order, %20 or +', () => {
    const good = new URL(signedUrl('note=a b&order=42', completed));
    const reordered = new URL(good.href);
    reordered.search = [...good.searchParams]
      .reverse()
      .map(([n, v]) => `${n}=${encodeURIComponent(v)}`)
      .join('&');
    expect(reordered.search).toContain('note=a%20b');
    expect(verify(reordered).query.get('note')).toBe('a b');
  });

  it('takes a path and query with the origin of the return URL (req.originalUrl behind a proxy)', () => {
    const url = new URL(signedUrl('order=42', completed));
    expect(verify(`${url.pathname}${url.search}`, { origin: 'https://shop.test' }).query.get('order')).toBe('42');
    expect(() => verify(`${url.pathname}${url.search}`, { origin: 'https://other.test' })).toThrow(/does not match/);
    expect(() => verify(`${url.pathname}${url.search}`)).toThrow(/pass options\.origin/);
  });

  it('says clearly what is wrong when called without a secret or without a URL', () => {
    const url = signedUrl('order=42', completed);
    expect(() => verifyFormSessionReturn(url, { signingSecret: undefined as unknown as string })).toThrow(
      /options\.signingSecret is missing/,
    );
    expect(() => verifyFormSessionReturn(url, { signingSecret: '' })).toThrow(TypeError);
    // No options at all (a JavaScript caller): the same clear error, not a TypeError from reading undefined.
    expect(() => (verifyFormSessionReturn as (u: string) => unknown)(url)).toThrow(/options\.signingSecret is missing/);
    expect(() => verify(new URL(url).searchParams as unknown as string)).toThrow(/needs the whole return URL/);
  });

  it('reads payment=succeeded|unknown as Tessera’s, outside the merchant’s query, and refuses another value', () => {
    const paid = verify(signedUrl('order=42', { ...completed, payment: 'unknown' }));
    expect(paid).toMatchObject({ status: 'completed', payment: 'unknown' });
    expect([...paid.query]).toEqual([['order', '42']]);
    expect(verify(signedUrl('order=42', completed)).payment).toBeUndefined();
    expect(() => verify(signedUrl('', { ...completed, payment: 'maybe' }))).toThrow(/unknown "payment"/);
  });

  it('refuses another secret, an old redirect and a missing signature', () => {
    const good = signedUrl('order=42', { ...completed, status: 'canceled' });
    expect(verify(good).status).toBe('canceled');
    expect(() => verify(good, { signingSecret: 'fss_test_other' })).toThrow(/does not match/);
    expect(() => verify(good, { now: new Date(NOW.getTime() + 601_000) })).toThrow(/too old/);
    const unsigned = new URL(good);
    unsigned.searchParams.delete('signature');
    expect(() => verify(unsigned)).toThrow(/signature/);
  });

  it('signs exactly the canonical URL the docs describe', () => {
    expect(formSessionReturnPayload(new URL('https://shop.test/done?signature=x&b=2&a=1&a=0'))).toBe(
      'tessera form-session return v2\nhttps://shop.test/done?a=1&a=0&b=2',
    );
  });
});
