import { generateToken, isTokenShaped } from './token';

describe('tokens', () => {
  it('are tok. followed by 32 URL-safe characters (24 random bytes)', () => {
    const token = generateToken();
    expect(token).toMatch(/^tok\.[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(24);
    expect(isTokenShaped(token)).toBe(true);
  });

  it('never repeat', () => {
    const tokens = new Set(Array.from({ length: 10_000 }, generateToken));
    expect(tokens.size).toBe(10_000);
  });

  it('look random: every base64url character appears across many tokens', () => {
    const seen = new Set(Array.from({ length: 2_000 }, generateToken).flatMap((t) => [...t.slice(4)]));
    expect(seen.size).toBe(64);
  });

  it.each([
    ['an empty string', ''],
    ['no prefix', 'AAAAAAAAAAAAAAAAAAAAAAAA'],
    ['too short', 'tok.abc'],
    ['a forbidden character', 'tok.AAAAAAAAAAAAAAAA/AAAAAAA'],
    ['a Redis key separator', 'tok.AAAAAAAAAAAAAAAA}AAAAAAA'],
    ['too long', `tok.${'A'.repeat(129)}`],
  ])('reject %s as a token shape', (_name, value) => {
    expect(isTokenShaped(value)).toBe(false);
  });
});
