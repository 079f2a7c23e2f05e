import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import { mfaConfirmSchema, signInSchema, type AdminSession, type AdminSessions, type StartedSession } from '../app/adminSessions';
import type { Caller } from '../app/caller';
import { clearedSessionCookie, csrfTokensMatch, readCookie, sessionCookie } from '../domain/sessions';
import { sendJson, setServiceHeaders } from '@tessera/edge';
import { contextOf } from '@tessera/edge';
import { parseBody } from './validation';

export const SESSION_COOKIE = 'tessera_admin';
/** The trusted-device token: sent to the login route only. */
export const DEVICE_COOKIE = 'tessera_admin_device';
const DEVICE_COOKIE_PATH = '/admin/v1/login';
/** The cookie goes to the admin API only, never to /v1 or the static files. */
const COOKIE_PATH = '/admin';

/** Routes a password-only session may use while a second factor is required but not set up. */
const ENROLMENT_ROUTES = new Set(['GET /session', 'POST /logout', 'POST /mfa/enrolment', 'POST /mfa/enrolment/confirm']);

const ADMIN = Symbol('tessera.admin');
type WithAdmin = Response & { [ADMIN]?: AdminSession };

/** The session requireSession found for this request. */
export function adminOf(res: Response): AdminSession {
  const admin = (res as WithAdmin)[ADMIN];
  if (!admin) throw new Error('no admin session: the session middleware must run first');
  return admin;
}

/** The signed-in operator as the use cases' caller: audited with this request's address, limited to their merchant. */
export function callerOf(res: Response): Caller {
  const { operator } = adminOf(res);
  return { actor: operator, ip: contextOf(res).clientIp, merchantId: operator.merchantId };
}

/** The new session's cookie, plus the trusted-device token after a sign-in with the second factor. */
function setSessionCookies(res: Response, started: StartedSession): void {
  const cookies = [sessionCookie(SESSION_COOKIE, started.sessionId, COOKIE_PATH)];
  if (started.device) {
    cookies.push(`${sessionCookie(DEVICE_COOKIE, started.device.token, DEVICE_COOKIE_PATH)}; Max-Age=${started.device.maxAgeSeconds}`);
  }
  res.setHeader('set-cookie', cookies);
}

/** POST /login: the one admin route without a session. */
export function registerSignInRoute(api: Router, sessions: AdminSessions, body: RequestHandler[]): void {
  api.post('/login', ...body, async (req: Request, res: Response) => {
    const input = parseBody(signInSchema, req);
    const result = await sessions.signIn(input, {
      ip: contextOf(res).clientIp,
      deviceToken: readCookie(req.headers.cookie, DEVICE_COOKIE),
      previousSessionId: readCookie(req.headers.cookie, SESSION_COOKIE),
    });
    if (result.status === 'throttled') throw result.error;
    setSessionCookies(res, result);
    sendJson(res, 200, sessions.sessionView(result.operator, result.session));
  });
}

/** Everything after it needs a live session and, to change anything, the session's CSRF token; API keys are not credentials here. */
export function requireSession(sessions: AdminSessions): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const found = await sessions.authenticate(readCookie(req.headers.cookie, SESSION_COOKIE));
    if ('error' in found) {
      if (found.clearCookie) res.setHeader('set-cookie', clearedSessionCookie(SESSION_COOKIE, COOKIE_PATH));
      throw found.error;
    }
    (res as WithAdmin)[ADMIN] = found;
    if (req.method !== 'GET' && req.method !== 'HEAD' && !csrfTokensMatch(req.headers['x-csrf-token'], found.session.csrfToken)) {
      throw new TesseraError('csrf_token_invalid');
    }
    // Signed in with the password only while a second factor is required: set it up, or leave.
    if (found.enrolmentOnly && !ENROLMENT_ROUTES.has(`${req.method} ${req.path}`)) throw new TesseraError('mfa_enrolment_required');
    next();
  };
}

/** The session itself: read it, set up the second factor, sign out. */
export function registerSessionRoutes(api: Router, sessions: AdminSessions, body: RequestHandler[]): void {
  api.get('/session', (_req, res) => {
    const { operator, session } = adminOf(res);
    sendJson(res, 200, sessions.sessionView(operator, session));
  });

  api.post('/mfa/enrolment', async (_req: Request, res: Response) => {
    sendJson(res, 200, await sessions.startMfaEnrolment(adminOf(res)));
  });

  api.post('/mfa/enrolment/confirm', ...body, async (req: Request, res: Response) => {
    const input = parseBody(mfaConfirmSchema, req);
    const started = await sessions.confirmMfaEnrolment(adminOf(res), input, contextOf(res).clientIp);
    setSessionCookies(res, started);
    sendJson(res, 200, { ...sessions.sessionView(started.operator, started.session), recoveryCodes: started.recoveryCodes });
  });

  api.post('/logout', async (_req, res) => {
    await sessions.signOut(adminOf(res), contextOf(res).clientIp);
    res.setHeader('set-cookie', clearedSessionCookie(SESSION_COOKIE, COOKIE_PATH));
    setServiceHeaders(res);
    res.status(204).end();
  });
}
