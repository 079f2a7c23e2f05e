import type { DetokenizationLog } from '../../store/detokenizationLog';
import path from 'node:path';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { TesseraError, type Cidr, type Logger } from '@tessera/common';
import { buildAuditRecord, type AuditInput } from '../../domain/admin/audit';
import { canManageMerchant, credentialsVersionOf, normalizeEmail, operatorView, type OperatorRecord } from '../../domain/admin/operators';
import { dummyPasswordHash, hashPassword, MAX_PASSWORD_LENGTH, needsRehash, verifyPassword } from '../../domain/admin/passwords';
import { loginBlock, loginBuckets, locksAfterFailure, lockoutPolicy } from '../../domain/admin/lockout';
import {
  decryptTotpSecret,
  deriveAdminSecretKeys,
  encryptTotpSecret,
  findRecoveryCode,
  issueDeviceToken,
  newRecoveryCodes,
  recoveryCodeDigest,
  verifyDeviceToken,
} from '../../domain/admin/mfaSecrets';
import { base32Encode, matchTotp, newTotpSecret, otpauthUri, TOTP } from '../../domain/admin/totp';
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
  type SessionRecord,
} from '../../domain/admin/sessions';
import { resolveClientIp } from '../../domain/clientIp';
import type { ApiKeyStore } from '../../store/apiKeyStore';
import type { AuditLog, LoginThrottle, OperatorStore, SessionStore } from '../../store/adminStores';
import { sendError, sendJson, setServiceHeaders } from '../envelope';
import { errorFromBodyParser, jsonObjectBody } from '../jsonBody';
import { chooseRequestId, contextOf, routeOf, setContext } from '../requestContext';
import { installSecurityHeaders } from '../securityHeaders';
import { merchantIdParam, pspHostsParam, refuseUnknown, requiredString } from './validation';
import { registerKeyRoutes } from './keyRoutes';
import { registerReturnUrlRoutes } from './returnUrlRoutes';
import type { MerchantSettingsStore } from '../../store/merchantSettingsStore';
import { registerRequestRoutes } from './requestRoutes';
import type { RequestLogDeps } from '../../app/requestLog';

export const ADMIN_BASE = '/admin/v1';
export const SESSION_COOKIE = 'tessera_admin';
/** The trusted-device token: sent to the login route only. */
export const DEVICE_COOKIE = 'tessera_admin_device';
const DEVICE_COOKIE_PATH = '/admin/v1/login';
/** A started MFA set-up must be confirmed within this time. */
const MFA_ENROLMENT_MS = 10 * 60 * 1000;
/** The issuer shown in authenticator apps. */
const TOTP_ISSUER = 'Tessera';
/** The cookie goes to the admin API only, never to /v1 or the static files. */
const COOKIE_PATH = '/admin';
const ADMIN_BODY_LIMIT = 32 * 1024;
/** Relative to dist/transport/admin and src/transport/admin alike. */
export const DASHBOARD_DIR = path.resolve(__dirname, '../../../public/dashboard');

export interface AdminDeps {
  keyStore: ApiKeyStore;
  operators: OperatorStore;
  sessions: SessionStore;
  throttle: LoginThrottle;
  audit: AuditLog;
  /** The detokenization audit (every /v1/proxy that renders card data); absent: route answers 404. */
  detokenizations?: DetokenizationLog;
  /** Per-merchant settings (PSP host allowlist); absent: the psp-hosts routes answer 404. */
  merchantSettings?: MerchantSettingsStore;
  /** The merchants' request logs (requestRoutes.ts); absent: those routes answer 404. */
  requestLog?: RequestLogDeps;
  pepper: string;
  /** Older peppers, newest first: TOTP secrets, recovery codes and device tokens made under them keep working. */
  previousPeppers?: readonly string[];
  trustedProxies: readonly Cidr[];
  logger: Logger;
  config: {
    ADMIN_SESSION_IDLE_SECONDS: number;
    ADMIN_SESSION_MAX_SECONDS: number;
    ADMIN_LOGIN_WINDOW_SECONDS: number;
    ADMIN_LOGIN_MAX_PER_IP: number;
    ADMIN_LOGIN_MAX_PER_ACCOUNT: number;
    /** Failures from one source against one account before that source is blocked for it (default 5). */
    ADMIN_LOGIN_MAX_PER_SOURCE?: number;
    /** How long a lock lasts (default 1800). */
    ADMIN_LOGIN_LOCKOUT_SECONDS?: number;
    /** How long a browser that signed in with the second factor stays trusted (default 30). */
    ADMIN_TRUSTED_DEVICE_DAYS?: number;
    HSTS_MAX_AGE_SECONDS?: number;
  };
  /** Whether every operator needs a second factor (first sign-in enrols); resolved by setUpAdmin. */
  mfaRequired?: boolean;
  now?: () => Date;
}

interface AdminLocals {
  operator: OperatorRecord;
  session: SessionRecord;
  sessionDigest: string;
}

const ADMIN = Symbol('tessera.admin');
type WithAdmin = Response & { [ADMIN]?: AdminLocals };

function adminOf(res: Response): AdminLocals {
  const locals = (res as WithAdmin)[ADMIN];
  if (!locals) throw new Error('no admin session: the session middleware must run first');
  return locals;
}

/** The dashboard page: only its own scripts and styles, never framed, no referrer leaks. */
const DASHBOARD_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-cache',
};

function toTesseraError(err: unknown): TesseraError {
  if (err instanceof TesseraError) return err;
  return errorFromBodyParser(err) ?? new TesseraError('internal_error', { cause: err });
}

/** True when the Origin header names this very host: anything else is a cross-site request. */
function sameOrigin(req: Request): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/**
 * The admin API (`/admin/v1`) and the dashboard page (`/dashboard`). Self-contained, so it can be
 * mounted on the public app or served on its own listener (ADMIN_PORT): it sets up the request
 * context when nobody did and answers its own errors with the usual envelope.
 */
export function createAdminRouter(deps: AdminDeps): Router {
  const { keyStore, operators, sessions, throttle, audit, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const router = express.Router();

  const ensureContext: RequestHandler = (req, res, next) => {
    try {
      contextOf(res);
    } catch {
      const requestId = chooseRequestId(req.headers['x-request-id']);
      setContext(res, { requestId, startedAt: process.hrtime.bigint() });
      res.setHeader('x-request-id', requestId);
      res.on('finish', () => {
        const ms = Number(process.hrtime.bigint() - contextOf(res).startedAt) / 1e6;
        logger.info(
          { method: req.method, route: routeOf(req) ?? null, status: res.statusCode, ms: Math.round(ms * 10) / 10, requestId },
          'request',
        );
      });
    }
    contextOf(res).clientIp = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies);
    next();
  };

  // Relative asset URLs in the page need the trailing slash; Express routing ignores it, so check.
  router.get('/dashboard', (req, res, next) => {
    if (req.path.endsWith('/')) return next();
    res.setHeader('cache-control', 'no-store');
    res.redirect(301, '/dashboard/');
  });
  router.use(
    '/dashboard',
    express.static(DASHBOARD_DIR, {
      index: 'index.html',
      redirect: false,
      dotfiles: 'ignore',
      setHeaders: (res) => {
        for (const [name, value] of Object.entries(DASHBOARD_HEADERS)) res.setHeader(name, value);
      },
    }),
  );

  const api = express.Router();
  router.use(ADMIN_BASE, ensureContext, api);

  const record = async (res: Response, input: Omit<AuditInput, 'now' | 'ip'>): Promise<void> => {
    await audit.append(buildAuditRecord({ ...input, ip: contextOf(res).clientIp, now: now() }));
  };

  const body = jsonObjectBody(ADMIN_BODY_LIMIT);

  // Browsers always send Origin on cross-site POSTs; SameSite=Strict and the CSRF token already
  // stop those, this refuses them before any work is done.
  api.use((req, _res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && !sameOrigin(req)) {
      throw new TesseraError('csrf_token_invalid', { message: 'Cross-origin requests to the admin API are refused.' });
    }
    next();
  });

  const policy = lockoutPolicy(deps.config);
  const secretKeys = deriveAdminSecretKeys(deps.pepper);
  // After a pepper rotation (API_KEY_PEPPERS), what was sealed or signed under an older one still
  // opens; a TOTP secret is re-sealed under the newest at its next sign-in.
  const allSecretKeys = [secretKeys, ...(deps.previousPeppers ?? []).map((p) => deriveAdminSecretKeys(p))];
  const openTotpSecret = (operatorId: string, sealed: string) => {
    for (const [index, keys] of allSecretKeys.entries()) {
      const secret = decryptTotpSecret(keys, operatorId, sealed);
      if (secret !== undefined) return { secret, current: index === 0 };
    }
    return undefined;
  };
  const mfaRequired = deps.mfaRequired ?? false;
  const deviceTtlSeconds = (deps.config.ADMIN_TRUSTED_DEVICE_DAYS ?? 30) * 86_400;

  /** A new session for the operator, as a cookie on this answer (plus the trusted-device token when given). */
  const startSession = async (res: Response, operator: OperatorRecord, extraCookies: string[] = []): Promise<SessionRecord> => {
    // A fresh id on every sign-in: a session id planted before sign-in is worthless afterwards.
    const sessionId = newSessionId();
    const at = now();
    const session: SessionRecord = {
      operatorId: operator.id,
      csrfToken: newCsrfToken(),
      createdAt: at.toISOString(),
      expiresAt: new Date(at.getTime() + deps.config.ADMIN_SESSION_MAX_SECONDS * 1000).toISOString(),
      ip: contextOf(res).clientIp ?? null,
      credentialsVersion: credentialsVersionOf(operator),
      ...(mfaRequired && operator.mfa === undefined ? { enrolmentOnly: true } : {}),
    };
    await sessions.create(sessionIdDigest(sessionId), session, sessionTtlMs(session, deps.config.ADMIN_SESSION_IDLE_SECONDS, at));
    res.setHeader('set-cookie', [sessionCookie(SESSION_COOKIE, sessionId, COOKIE_PATH), ...extraCookies]);
    return session;
  };

  const deviceCookieFor = (operator: OperatorRecord): string =>
    `${sessionCookie(
      DEVICE_COOKIE,
      issueDeviceToken(secretKeys, {
        operatorId: operator.id,
        credentialsVersion: credentialsVersionOf(operator),
        now: now(),
        ttlSeconds: deviceTtlSeconds,
      }),
      DEVICE_COOKIE_PATH,
    )}; Max-Age=${deviceTtlSeconds}`;

  api.post('/login', ...body, async (req: Request, res: Response) => {
    const input = req.body as Record<string, unknown>;
    refuseUnknown(input, ['email', 'password', 'code', 'recoveryCode']);
    const email = normalizeEmail(requiredString(input, 'email', 320));
    const password = requiredString(input, 'password', MAX_PASSWORD_LENGTH);
    const code = input.code === undefined || input.code === '' ? undefined : requiredString(input, 'code', 16);
    const recoveryCode =
      input.recoveryCode === undefined || input.recoveryCode === '' ? undefined : requiredString(input, 'recoveryCode', 32);
    const ip = contextOf(res).clientIp ?? 'unknown';

    // Attempts per address, whatever the account (spraying), counted before anything is checked.
    const byIp = await throttle.hit(`ip:${ip}`, policy.windowMs);
    const operator = await operators.findByEmail(email);
    const deviceId =
      operator === undefined
        ? undefined
        : allSecretKeys
            .map((keys) =>
              verifyDeviceToken(keys, readCookie(req.headers.cookie, DEVICE_COOKIE), {
                operatorId: operator.id,
                credentialsVersion: credentialsVersionOf(operator),
                now: now(),
              }),
            )
            .find((id) => id !== undefined);
    const buckets = loginBuckets(email, { ip, ...(deviceId !== undefined ? { deviceId } : {}) });
    const [accountLockMs, sourceLockMs] = await Promise.all([
      throttle.lockRemainingMs(buckets.account),
      throttle.lockRemainingMs(buckets.source),
    ]);
    const block =
      byIp.count > deps.config.ADMIN_LOGIN_MAX_PER_IP
        ? { by: 'ip', retryInMs: byIp.resetInMs }
        : loginBlock({ accountLockMs, sourceLockMs, trustedDevice: deviceId !== undefined });
    if (block) {
      const retryAfter = Math.max(1, Math.ceil(block.retryInMs / 1000));
      await record(res, {
        action: 'login.throttled',
        actor: operator ?? null,
        merchantId: operator?.merchantId ?? null,
        details: { limit: block.by },
      });
      res.setHeader('retry-after', String(retryAfter));
      const what = block.by === 'ip' ? 'from this address' : 'for this account';
      throw new TesseraError('rate_limited', { message: `Too many failed sign-ins ${what}. Try again in ${retryAfter} seconds.` });
    }

    /** Counts a failure for the account and this source, locks what reached its limit, answers `error`. */
    const fail = async (reason: string, error: TesseraError): Promise<never> => {
      const at = now().getTime();
      const [account, source] = await Promise.all([
        throttle.recordFailure(buckets.account, policy.windowMs, at),
        throttle.recordFailure(buckets.source, policy.windowMs, at),
      ]);
      const locks = locksAfterFailure({ account, source }, policy);
      await Promise.all([
        locks.account ? throttle.lock(buckets.account, policy.lockoutMs) : undefined,
        locks.source ? throttle.lock(buckets.source, policy.lockoutMs) : undefined,
      ]);
      await record(res, {
        action: 'login.failed',
        // The typed email is not echoed for unknown accounts: people type passwords into that field.
        actor: operator ?? null,
        merchantId: operator?.merchantId ?? null,
        details: { reason, ...(locks.account ? { locked: 'account' } : locks.source ? { locked: 'source' } : {}) },
      });
      throw error;
    };

    // Always one scrypt, even for an unknown email, so timing does not reveal who has an account.
    const valid = await verifyPassword(password, operator?.passwordHash ?? (await dummyPasswordHash()));
    if (!operator || !valid || operator.disabledAt !== undefined) {
      return fail(!operator ? 'unknown_account' : !valid ? 'wrong_password' : 'account_disabled', new TesseraError('login_failed'));
    }

    let factor: 'none' | 'totp' | 'recovery_code' = 'none';
    let signedIn = operator;
    if (operator.mfa !== undefined) {
      const mfa = operator.mfa;
      // The right password alone is not a failure: the dashboard now asks for the code.
      if (code === undefined && recoveryCode === undefined) throw new TesseraError('mfa_code_required');
      if (code !== undefined) {
        const opened = openTotpSecret(operator.id, mfa.secret);
        const step = opened === undefined ? undefined : matchTotp(opened.secret, code, now().getTime(), mfa.lastStep);
        // The claim makes a code single-use across replicas and concurrent requests (RFC 6238 §5.2).
        const fresh =
          step !== undefined && (await throttle.claimOnce(`totp:${operator.id}:${step}`, (2 * TOTP.stepSeconds + TOTP.stepSeconds) * 1000));
        if (step === undefined || !fresh) return fail('wrong_code', new TesseraError('mfa_code_invalid', { param: 'code' }));
        const secret = opened?.current === false ? encryptTotpSecret(secretKeys, operator.id, opened.secret) : mfa.secret;
        signedIn = (await operators.update(operator.id, { mfa: { ...mfa, secret, lastStep: step } })) ?? operator;
        factor = 'totp';
      } else {
        const digest = allSecretKeys
          .map((keys) => mfa.recoveryCodes[findRecoveryCode(keys, operator.id, recoveryCode ?? '', mfa.recoveryCodes)])
          .find((d) => d !== undefined);
        const fresh = digest !== undefined && (await throttle.claimOnce(`recovery:${operator.id}:${digest}`, 86_400_000));
        if (!fresh) return fail('wrong_recovery_code', new TesseraError('mfa_code_invalid', { param: 'recoveryCode' }));
        const recoveryCodes = mfa.recoveryCodes.filter((d) => d !== digest);
        signedIn = (await operators.update(operator.id, { mfa: { ...mfa, recoveryCodes } })) ?? operator;
        factor = 'recovery_code';
      }
    }

    // This source's failures are forgiven; the account's age out of the window (an attacker's
    // failures must keep counting even while the operator works from a trusted device).
    await throttle.reset(buckets.source);
    if (needsRehash(operator.passwordHash)) {
      signedIn = (await operators.update(operator.id, { passwordHash: await hashPassword(password) })) ?? signedIn;
    }
    const previous = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (previous !== undefined && SESSION_ID_PATTERN.test(previous)) await sessions.delete(sessionIdDigest(previous));
    const session = await startSession(res, signedIn, factor === 'none' ? [] : [deviceCookieFor(signedIn)]);
    await record(res, {
      action: 'login.succeeded',
      actor: signedIn,
      merchantId: signedIn.merchantId,
      details: {
        factor,
        trustedDevice: deviceId !== undefined,
        ...(factor === 'recovery_code' ? { recoveryCodesLeft: signedIn.mfa?.recoveryCodes.length ?? 0 } : {}),
      },
    });
    sendJson(res, 200, sessionJson(signedIn, session, mfaRequired));
  });

  // Everything below needs a live session; API keys are not credentials here.
  api.use(async (req: Request, res: Response, next: NextFunction) => {
    const sessionId = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (sessionId === undefined || !SESSION_ID_PATTERN.test(sessionId)) throw new TesseraError('admin_session_required');
    const digest = sessionIdDigest(sessionId);
    const session = await sessions.get(digest);
    const ttl = session ? sessionTtlMs(session, deps.config.ADMIN_SESSION_IDLE_SECONDS, now()) : 0;
    const operator = session && ttl > 0 ? await operators.get(session.operatorId) : undefined;
    // A password or second-factor change ends every session issued before it.
    const current = operator !== undefined && credentialsVersionOf(operator) === (session?.credentialsVersion ?? 0);
    if (!session || !operator || operator.disabledAt !== undefined || !current) {
      if (session) await sessions.delete(digest);
      res.setHeader('set-cookie', clearedSessionCookie(SESSION_COOKIE, COOKIE_PATH));
      throw new TesseraError('admin_session_required', {
        message: session ? 'Your dashboard session has ended. Log in again.' : 'Log in to the dashboard first.',
      });
    }
    await sessions.touch(digest, ttl);
    (res as WithAdmin)[ADMIN] = { operator, session, sessionDigest: digest };
    if (req.method !== 'GET' && req.method !== 'HEAD' && !csrfTokensMatch(req.headers['x-csrf-token'], session.csrfToken)) {
      throw new TesseraError('csrf_token_invalid');
    }
    // Signed in with the password only while a second factor is required: set it up, or leave.
    if (session.enrolmentOnly && operator.mfa === undefined && !ENROLMENT_ROUTES.has(`${req.method} ${req.path}`)) {
      throw new TesseraError('mfa_enrolment_required');
    }
    next();
  });

  api.get('/session', (_req, res) => {
    const { operator, session } = adminOf(res);
    sendJson(res, 200, sessionJson(operator, session, mfaRequired));
  });

  // Two-factor set-up: start (a new secret, shown once), then confirm with a first code.
  api.post('/mfa/enrolment', async (_req: Request, res: Response) => {
    const { operator } = adminOf(res);
    if (operator.mfa !== undefined) throw new TesseraError('mfa_already_enabled');
    const secret = newTotpSecret();
    await operators.update(operator.id, {
      mfaPending: { secret: encryptTotpSecret(secretKeys, operator.id, secret), startedAt: now().toISOString() },
    });
    sendJson(res, 200, {
      secret: base32Encode(secret),
      otpauthUri: otpauthUri({ issuer: TOTP_ISSUER, account: operator.email, secret }),
      digits: TOTP.digits,
      period: TOTP.stepSeconds,
    });
  });

  api.post('/mfa/enrolment/confirm', ...body, async (req: Request, res: Response) => {
    const { operator, sessionDigest } = adminOf(res);
    const input = req.body as Record<string, unknown>;
    refuseUnknown(input, ['code']);
    const code = requiredString(input, 'code', 16);
    if (operator.mfa !== undefined) throw new TesseraError('mfa_already_enabled');
    const pending = operator.mfaPending;
    const secret =
      pending && Date.parse(pending.startedAt) + MFA_ENROLMENT_MS > now().getTime()
        ? decryptTotpSecret(secretKeys, operator.id, pending.secret)
        : undefined;
    if (secret === undefined) throw new TesseraError('mfa_enrolment_not_started');
    const step = matchTotp(secret, code, now().getTime(), undefined);
    if (step === undefined || !(await throttle.claimOnce(`totp:${operator.id}:${step}`, 3 * TOTP.stepSeconds * 1000))) {
      throw new TesseraError('mfa_code_invalid', { param: 'code' });
    }
    const recoveryCodes = newRecoveryCodes();
    const enabled = await operators.update(operator.id, {
      mfa: {
        secret: pending?.secret ?? '',
        enabledAt: now().toISOString(),
        recoveryCodes: recoveryCodes.map((c) => recoveryCodeDigest(secretKeys, operator.id, c)),
        lastStep: step,
      },
      mfaPending: null,
      credentialsChanged: true,
    });
    if (!enabled) throw new TesseraError('admin_session_required');
    // The change ended every session of the operator, this one too: this browser gets a new one.
    await sessions.delete(sessionDigest);
    const session = await startSession(res, enabled, [deviceCookieFor(enabled)]);
    await record(res, { action: 'mfa.enabled', actor: enabled, merchantId: enabled.merchantId });
    sendJson(res, 200, { ...sessionJson(enabled, session, mfaRequired), recoveryCodes });
  });

  api.post('/logout', async (_req, res) => {
    const { operator, sessionDigest } = adminOf(res);
    await sessions.delete(sessionDigest);
    await record(res, { action: 'logout', actor: operator, merchantId: operator.merchantId });
    res.setHeader('set-cookie', clearedSessionCookie(SESSION_COOKIE, COOKIE_PATH));
    setServiceHeaders(res);
    res.status(204).end();
  });

  api.get('/merchants', async (_req, res) => {
    const { operator } = adminOf(res);
    if (operator.merchantId !== null) return sendJson(res, 200, { merchants: [operator.merchantId] });
    const ids = new Set<string>();
    for (const key of await keyStore.list()) ids.add(key.merchantId);
    for (const op of await operators.list()) if (op.merchantId !== null) ids.add(op.merchantId);
    sendJson(res, 200, { merchants: [...ids].sort() });
  });

  /** The merchant a request is about: a merchant operator's own, or the one a platform operator names. */
  const merchantFor = (operator: OperatorRecord, requested: string | undefined, param: string): string | undefined => {
    if (requested === undefined) return operator.merchantId ?? undefined;
    const merchantId = merchantIdParam(requested, param);
    if (!canManageMerchant(operator, merchantId)) throw new TesseraError('merchant_forbidden', { param });
    return merchantId;
  };

  const queryString = (req: Request, name: string): string | undefined => {
    const value = req.query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw new TesseraError('parameter_invalid', { param: name });
    return value;
  };

  registerKeyRoutes(api, {
    deps: { keyStore, audit, pepper: deps.pepper, now },
    body,
    operatorOf: (res) => adminOf(res).operator,
    merchantFor,
    queryString,
  });

  api.get('/audit', async (req, res) => {
    const { operator } = adminOf(res);
    const merchantId = merchantFor(operator, queryString(req, 'merchantId'), 'merchantId');
    const limitText = queryString(req, 'limit');
    const limit = limitText === undefined ? 100 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new TesseraError('parameter_invalid', { param: 'limit', message: '"limit" must be an integer from 1 to 1000.' });
    }
    sendJson(res, 200, { entries: await audit.list({ ...(merchantId !== undefined ? { merchantId } : {}), limit }) });
  });

  api.get('/detokenizations', async (req, res) => {
    if (deps.detokenizations === undefined) throw new TesseraError('route_not_found');
    const { operator } = adminOf(res);
    const merchantId = merchantFor(operator, queryString(req, 'merchantId'), 'merchantId');
    const limitText = queryString(req, 'limit');
    const limit = limitText === undefined ? 100 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new TesseraError('parameter_invalid', { param: 'limit', message: '"limit" must be an integer from 1 to 1000.' });
    }
    const entries = await deps.detokenizations.list({ ...(merchantId !== undefined ? { merchantId } : {}), limit });
    sendJson(res, 200, { entries });
  });

  // The merchant's PSP host allowlist, enforced by the proxy on every /v1/proxy (empty: any public host).
  const pspHostsStore = (): MerchantSettingsStore => {
    if (deps.merchantSettings === undefined) throw new TesseraError('route_not_found');
    return deps.merchantSettings;
  };

  api.get('/merchants/:merchantId/psp-hosts', async (req: Request, res: Response) => {
    const { operator } = adminOf(res);
    const merchantId = merchantFor(operator, String(req.params.merchantId), 'merchantId') as string;
    const settings = await pspHostsStore().get(merchantId);
    sendJson(res, 200, { merchantId, pspHosts: settings?.pspHosts ?? [], updatedAt: settings?.updatedAt ?? null });
  });

  api.put('/merchants/:merchantId/psp-hosts', ...body, async (req: Request, res: Response) => {
    const { operator } = adminOf(res);
    const store = pspHostsStore();
    const merchantId = merchantFor(operator, String(req.params.merchantId), 'merchantId') as string;
    const input = req.body as Record<string, unknown>;
    refuseUnknown(input, ['pspHosts']);
    const pspHosts = pspHostsParam(input);
    if (pspHosts === undefined) {
      throw new TesseraError('parameter_missing', { param: 'pspHosts', message: '"pspHosts" is required ([] allows any host).' });
    }
    const before = (await store.get(merchantId))?.pspHosts ?? [];
    const settings = await store.setPspHosts(merchantId, pspHosts, now());
    await record(res, {
      action: 'merchant.psp_hosts_updated',
      actor: operator,
      merchantId,
      details: { pspHosts, previousPspHosts: before },
    });
    sendJson(res, 200, { merchantId, pspHosts: settings.pspHosts, updatedAt: settings.updatedAt });
  });

  // The hosted payment page's return URLs and signing secret (returnUrlRoutes.ts).
  registerReturnUrlRoutes(api, {
    depsOf: () => ({ merchantSettings: pspHostsStore(), audit, pepper: deps.pepper, now }),
    body,
    operatorOf: (res) => adminOf(res).operator,
    merchantFor,
  });

  registerRequestRoutes(api, { deps: deps.requestLog, operatorOf: (res) => adminOf(res).operator });

  api.use((_req: Request, res: Response) => {
    sendError(res, new TesseraError('route_not_found'), contextOf(res).requestId);
  });

  api.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const error = toTesseraError(err);
    const ctx = contextOf(res);
    const fields = { requestId: ctx.requestId, code: error.code, route: routeOf(req) ?? null };
    if (error.status >= 500) logger.error({ ...fields, err: error.cause ?? err }, 'admin request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, error, ctx.requestId);
  });

  return router;
}

/** Routes a password-only session may use while a second factor is required but not set up. */
const ENROLMENT_ROUTES = new Set(['GET /session', 'POST /logout', 'POST /mfa/enrolment', 'POST /mfa/enrolment/confirm']);

function sessionJson(operator: OperatorRecord, session: SessionRecord, mfaRequired: boolean) {
  return {
    operator: operatorView(operator),
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
    mfaRequired,
    mfaEnrolmentRequired: mfaRequired && operator.mfa === undefined,
  };
}

/** The admin API and dashboard on a listener of their own (ADMIN_PORT): nothing else is served there. */
export function createAdminApp(deps: AdminDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  installSecurityHeaders(app, { hstsMaxAgeSeconds: deps.config.HSTS_MAX_AGE_SECONDS ?? 0 });
  app.use(createAdminRouter(deps));
  app.use((req: Request, res: Response) => {
    const requestId = chooseRequestId(req.headers['x-request-id']);
    sendError(res, new TesseraError('route_not_found'), requestId);
  });
  return app;
}
