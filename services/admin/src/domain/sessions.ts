import crypto from 'node:crypto';

/**
 * Session ids and CSRF tokens: 256 bits from a CSPRNG. The store keys a session by the SHA-256 of
 * its id, so a copy of the store (a backup, a replica) does not hold usable session cookies.
 */
export function newSessionId(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function sessionIdDigest(sessionId: string): string {
  return crypto.createHash('sha256').update(sessionId, 'utf8').digest('hex');
}

export function newCsrfToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Constant-time comparison of the presented CSRF token with the session's (synchronizer token). */
export function csrfTokensMatch(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length === 0) return false;
  const a = crypto.createHash('sha256').update(presented).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b) && presented.length === expected.length;
}

export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface SessionRecord {
  operatorId: string;
  csrfToken: string;
  createdAt: string;
  /** Absolute end, whatever the activity (PCI DSS 8.2.8 asks for an idle limit; this caps the rest). */
  expiresAt: string;
  ip: string | null;
  /** The operator's credentials version at sign-in: a session of an older version has ended. Absent: 0. */
  credentialsVersion?: number;
  /** Signed in with the password only while a second factor is required: may only enrol (and sign out). */
  enrolmentOnly?: boolean;
}

/**
 * How long the store should keep a session after this request: the idle timeout, but never past
 * the absolute expiry. Zero or less means the session is over.
 */
export function sessionTtlMs(session: Pick<SessionRecord, 'expiresAt'>, idleSeconds: number, now: Date): number {
  const remaining = Date.parse(session.expiresAt) - now.getTime();
  return Math.min(idleSeconds * 1000, remaining);
}

/** Cookie attributes: not readable by scripts, only over secure contexts, never sent cross-site. */
export function sessionCookie(name: string, value: string, path: string): string {
  return `${name}=${value}; Path=${path}; HttpOnly; Secure; SameSite=Strict`;
}

export function clearedSessionCookie(name: string, path: string): string {
  return `${name}=; Path=${path}; HttpOnly; Secure; SameSite=Strict; Max-Age=0`;
}

/** The value of one cookie in a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
