import {
  clearedSessionCookie,
  csrfTokensMatch,
  newCsrfToken,
  newSessionId,
  readCookie,
  SESSION_ID_PATTERN,
  sessionCookie,
  sessionIdDigest,
  sessionTtlMs,
} from './sessions';

describe('admin sessions', () => {
  it('makes 256-bit session ids and keys the store by their SHA-256, never the id itself', () => {
    const id = newSessionId();
    expect(id).toMatch(SESSION_ID_PATTERN);
    expect(newSessionId()).not.toBe(id);
    expect(sessionIdDigest(id)).toMatch(/^[0-9a-f]{64}$/);
    expect(sessionIdDigest(id)).not.toContain(id);
  });

  it('accepts only the exact CSRF token of the session', () => {
    const token = newCsrfToken();
    expect(csrfTokensMatch(token, token)).toBe(true);
    expect(csrfTokensMatch(token.slice(0, -1), token)).toBe(false);
    expect(csrfTokensMatch(`${token}x`, token)).toBe(false);
    expect(csrfTokensMatch('', token)).toBe(false);
    expect(csrfTokensMatch(undefined, token)).toBe(false);
    expect(csrfTokensMatch([token], token)).toBe(false);
  });

  it('keeps a session for the idle timeout, but never past its absolute end', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(sessionTtlMs({ expiresAt: '2026-01-01T08:00:00Z' }, 900, now)).toBe(900_000);
    expect(sessionTtlMs({ expiresAt: '2026-01-01T00:05:00Z' }, 900, now)).toBe(300_000);
    expect(sessionTtlMs({ expiresAt: '2025-12-31T23:59:00Z' }, 900, now)).toBeLessThanOrEqual(0);
  });

  it('sets the cookie HttpOnly, Secure and SameSite=Strict, and clears it the same way', () => {
    expect(sessionCookie('tessera_admin', 'abc', '/admin')).toBe('tessera_admin=abc; Path=/admin; HttpOnly; Secure; SameSite=Strict');
    expect(clearedSessionCookie('tessera_admin', '/admin')).toMatch(
      /^tessera_admin=; Path=\/admin; HttpOnly; Secure; SameSite=Strict; Max-Age=0$/,
    );
  });

  it('reads one cookie out of a Cookie header', () => {
    expect(readCookie('a=1; tessera_admin=xyz; b=2', 'tessera_admin')).toBe('xyz');
    expect(readCookie('tessera_admin_other=1', 'tessera_admin')).toBeUndefined();
    expect(readCookie(undefined, 'tessera_admin')).toBeUndefined();
  });
});
