import { type AuditInput, type AuditLog, buildAuditRecord } from '@tessera/merchant-data';
import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import { loginBlock, loginBuckets, locksAfterFailure, lockoutPolicy } from '../domain/lockout';
import * as mfaSecrets from '../domain/mfaSecrets';
import { credentialsVersionOf, normalizeEmail, operatorView, type OperatorRecord, type OperatorView } from '../domain/operators';
import { dummyPasswordHash, hashPassword, MAX_PASSWORD_LENGTH, needsRehash, verifyPassword } from '../domain/passwords';
import { newCsrfToken, newSessionId, SESSION_ID_PATTERN, sessionIdDigest, sessionTtlMs, type SessionRecord } from '../domain/sessions';
import { base32Encode, matchTotp, newTotpSecret, otpauthUri, TOTP } from '../domain/totp';
import { rateLimitRefusal, type RateLimitRefusal } from '@tessera/edge';
import type { LoginThrottle, OperatorStore, SessionStore } from '../store/adminStores';
import { optionalText, requiredText } from '@tessera/edge';

/**
 * Dashboard sign-in, second-factor set-up, the session check of every admin request, and
 * sign-out. The admin API calls these and only turns cookies and headers into their arguments
 * and their results into cookies and JSON; the rules (lockout, single-use codes, sessions ended
 * by a credential change) live here and in domain/admin.
 */
export interface AdminSessionDeps {
  operators: OperatorStore;
  sessions: SessionStore;
  throttle: LoginThrottle;
  audit: Pick<AuditLog, 'append'>;
  pepper: string;
  /** Older peppers, newest first: TOTP secrets, recovery codes and device tokens made under them keep working. */
  previousPeppers?: readonly string[];
  config: {
    ADMIN_SESSION_IDLE_SECONDS: number;
    ADMIN_SESSION_MAX_SECONDS: number;
    ADMIN_LOGIN_WINDOW_SECONDS: number;
    ADMIN_LOGIN_MAX_PER_IP: number;
    ADMIN_LOGIN_MAX_PER_ACCOUNT: number;
    ADMIN_LOGIN_MAX_PER_SOURCE?: number;
    ADMIN_LOGIN_LOCKOUT_SECONDS?: number;
    /** How long a browser that signed in with the second factor stays trusted (default 30). */
    ADMIN_TRUSTED_DEVICE_DAYS?: number;
  };
  /** Whether every operator needs a second factor (first sign-in enrols). */
  mfaRequired: boolean;
  now: () => Date;
}

/** A started MFA set-up must be confirmed within this time. */
const MFA_ENROLMENT_MS = 10 * 60 * 1000;
/** The issuer shown in authenticator apps. */
const TOTP_ISSUER = 'Tessera';

export const signInSchema = z.strictObject({
  email: requiredText('email', 320),
  password: requiredText('password', MAX_PASSWORD_LENGTH),
  code: optionalText('code', 16).meta({ description: 'The 6-digit TOTP code, once the operator has a second factor.' }),
  recoveryCode: optionalText('recoveryCode', 32).meta({ description: 'Instead of `code`: one of the recovery codes (each works once).' }),
});
export type SignInInput = z.output<typeof signInSchema>;

export const mfaConfirmSchema = z.strictObject({ code: requiredText('code', 16) });

/** Where a sign-in comes from: the address, and what the browser already holds. */
export interface SignInSource {
  ip: string | undefined;
  /** The trusted-device token this browser was given at an earlier sign-in with the second factor. */
  deviceToken: string | undefined;
  /** A session id the browser still sends: ended, so a planted id is worthless afterwards. */
  previousSessionId: string | undefined;
}

/** A new session: its id goes to the browser (as a cookie), only its digest to the store. */
export interface StartedSession {
  operator: OperatorRecord;
  session: SessionRecord;
  sessionId: string;
  /** Set after a sign-in with the second factor: the browser is trusted for `maxAgeSeconds`. */
  device?: { token: string; maxAgeSeconds: number };
}

export type SignInResult =
  | ({ status: 'signed_in' } & StartedSession)
  /** Too many attempts: the 429 to answer, carrying its wait. */
  | { status: 'throttled'; error: RateLimitRefusal };

/** The live session of a request, checked and extended. */
export interface AdminSession {
  operator: OperatorRecord;
  session: SessionRecord;
  sessionDigest: string;
  /** A password-only session while a second factor is required: it may only set one up (or leave). */
  enrolmentOnly: boolean;
}

/** Why a presented session is refused, and whether the browser should forget its cookie. */
export type SessionRefusal = { error: TesseraError; clearCookie: boolean };

export interface AdminSessions {
  signIn(input: SignInInput, from: SignInSource): Promise<SignInResult>;
  /** The session a cookie names, or the refusal to answer; a live one is extended (idle timeout). */
  authenticate(sessionId: string | undefined): Promise<AdminSession | SessionRefusal>;
  startMfaEnrolment(who: AdminSession): Promise<{ secret: string; otpauthUri: string; digits: number; period: number }>;
  confirmMfaEnrolment(
    who: AdminSession,
    input: z.output<typeof mfaConfirmSchema>,
    ip: string | undefined,
  ): Promise<StartedSession & { recoveryCodes: string[] }>;
  signOut(who: AdminSession, ip: string | undefined): Promise<void>;
  /** What the dashboard is told about a session. */
  sessionView(operator: OperatorRecord, session: SessionRecord): SessionView;
}

export interface SessionView {
  operator: OperatorView;
  csrfToken: string;
  expiresAt: string;
  mfaRequired: boolean;
  mfaEnrolmentRequired: boolean;
}

export function createAdminSessions(deps: AdminSessionDeps): AdminSessions {
  const { operators, sessions, throttle, now, mfaRequired } = deps;
  const policy = lockoutPolicy(deps.config);
  const secretKeys = mfaSecrets.deriveAdminSecretKeys(deps.pepper);
  // After a pepper rotation (API_KEY_PEPPERS), what was sealed or signed under an older one still
  // opens; a TOTP secret is re-sealed under the newest at its next sign-in.
  const allSecretKeys: mfaSecrets.AdminSecretKeys[] = [
    secretKeys,
    ...(deps.previousPeppers ?? []).map((p) => mfaSecrets.deriveAdminSecretKeys(p)),
  ];
  const deviceTtlSeconds = (deps.config.ADMIN_TRUSTED_DEVICE_DAYS ?? 30) * 86_400;

  const openTotpSecret = (operatorId: string, sealed: string) => {
    for (const [index, keys] of allSecretKeys.entries()) {
      const secret = mfaSecrets.decryptTotpSecret(keys, operatorId, sealed);
      if (secret !== undefined) return { secret, current: index === 0 };
    }
    return undefined;
  };

  const record = async (ip: string | undefined, input: Omit<AuditInput, 'now' | 'ip'>): Promise<void> => {
    await deps.audit.append(buildAuditRecord({ ...input, ip, now: now() }));
  };

  const startSession = async (operator: OperatorRecord, ip: string | undefined, trustDevice: boolean): Promise<StartedSession> => {
    // A fresh id on every sign-in: a session id planted before sign-in is worthless afterwards.
    const sessionId = newSessionId();
    const at = now();
    const session: SessionRecord = {
      operatorId: operator.id,
      csrfToken: newCsrfToken(),
      createdAt: at.toISOString(),
      expiresAt: new Date(at.getTime() + deps.config.ADMIN_SESSION_MAX_SECONDS * 1000).toISOString(),
      ip: ip ?? null,
      credentialsVersion: credentialsVersionOf(operator),
      ...(mfaRequired && operator.mfa === undefined ? { enrolmentOnly: true } : {}),
    };
    await sessions.create(sessionIdDigest(sessionId), session, sessionTtlMs(session, deps.config.ADMIN_SESSION_IDLE_SECONDS, at));
    if (!trustDevice) return { operator, session, sessionId };
    const token = mfaSecrets.issueDeviceToken(secretKeys, {
      operatorId: operator.id,
      credentialsVersion: credentialsVersionOf(operator),
      now: now(),
      ttlSeconds: deviceTtlSeconds,
    });
    return { operator, session, sessionId, device: { token, maxAgeSeconds: deviceTtlSeconds } };
  };

  const signIn = async (input: SignInInput, from: SignInSource): Promise<SignInResult> => {
    const email = normalizeEmail(input.email);
    const { password } = input;
    const code = input.code === '' ? undefined : input.code;
    const recoveryCode = input.recoveryCode === '' ? undefined : input.recoveryCode;
    const ip = from.ip ?? 'unknown';

    // Attempts per address, whatever the account (spraying), counted before anything is checked.
    const byIp = await throttle.hit(`ip:${ip}`, policy.windowMs);
    const operator = await operators.findByEmail(email);
    const deviceId =
      operator === undefined
        ? undefined
        : allSecretKeys
            .map((keys) =>
              mfaSecrets.verifyDeviceToken(keys, from.deviceToken, {
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
      await record(from.ip, {
        action: 'login.throttled',
        actor: operator ?? null,
        merchantId: operator?.merchantId ?? null,
        details: { limit: block.by },
      });
      const what = block.by === 'ip' ? 'from this address' : 'for this account';
      return { status: 'throttled', error: rateLimitRefusal(`Too many failed sign-ins ${what}.`, block.retryInMs) };
    }

    /** Counts a failure for the account and this source, locks what reached its limit, throws `error`. */
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
      await record(from.ip, {
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
        const secret = opened?.current === false ? mfaSecrets.encryptTotpSecret(secretKeys, operator.id, opened.secret) : mfa.secret;
        signedIn = (await operators.update(operator.id, { mfa: { ...mfa, secret, lastStep: step } })) ?? operator;
        factor = 'totp';
      } else {
        const digest = allSecretKeys
          .map((keys) => mfa.recoveryCodes[mfaSecrets.findRecoveryCode(keys, operator.id, recoveryCode ?? '', mfa.recoveryCodes)])
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
    const previous = from.previousSessionId;
    if (previous !== undefined && SESSION_ID_PATTERN.test(previous)) await sessions.delete(sessionIdDigest(previous));
    const started = await startSession(signedIn, from.ip, factor !== 'none');
    await record(from.ip, {
      action: 'login.succeeded',
      actor: signedIn,
      merchantId: signedIn.merchantId,
      details: {
        factor,
        trustedDevice: deviceId !== undefined,
        ...(factor === 'recovery_code' ? { recoveryCodesLeft: signedIn.mfa?.recoveryCodes.length ?? 0 } : {}),
      },
    });
    return { status: 'signed_in', ...started };
  };

  const authenticate = async (sessionId: string | undefined): Promise<AdminSession | SessionRefusal> => {
    if (sessionId === undefined || !SESSION_ID_PATTERN.test(sessionId)) {
      return { error: new TesseraError('admin_session_required'), clearCookie: false };
    }
    const digest = sessionIdDigest(sessionId);
    const session = await sessions.get(digest);
    const ttl = session ? sessionTtlMs(session, deps.config.ADMIN_SESSION_IDLE_SECONDS, now()) : 0;
    const operator = session && ttl > 0 ? await operators.get(session.operatorId) : undefined;
    // A password or second-factor change ends every session issued before it.
    const current = operator !== undefined && credentialsVersionOf(operator) === (session?.credentialsVersion ?? 0);
    if (!session || !operator || operator.disabledAt !== undefined || !current) {
      if (session) await sessions.delete(digest);
      const message = session ? 'Your dashboard session has ended. Log in again.' : 'Log in to the dashboard first.';
      return { error: new TesseraError('admin_session_required', { message }), clearCookie: true };
    }
    await sessions.touch(digest, ttl);
    return { operator, session, sessionDigest: digest, enrolmentOnly: session.enrolmentOnly === true && operator.mfa === undefined };
  };

  // Two-factor set-up: start (a new secret, shown once), then confirm with a first code.
  const startMfaEnrolment: AdminSessions['startMfaEnrolment'] = async ({ operator }) => {
    if (operator.mfa !== undefined) throw new TesseraError('mfa_already_enabled');
    const secret = newTotpSecret();
    await operators.update(operator.id, {
      mfaPending: { secret: mfaSecrets.encryptTotpSecret(secretKeys, operator.id, secret), startedAt: now().toISOString() },
    });
    return {
      secret: base32Encode(secret),
      otpauthUri: otpauthUri({ issuer: TOTP_ISSUER, account: operator.email, secret }),
      digits: TOTP.digits,
      period: TOTP.stepSeconds,
    };
  };

  const confirmMfaEnrolment: AdminSessions['confirmMfaEnrolment'] = async ({ operator, sessionDigest }, { code }, ip) => {
    if (operator.mfa !== undefined) throw new TesseraError('mfa_already_enabled');
    const pending = operator.mfaPending;
    const secret =
      pending && Date.parse(pending.startedAt) + MFA_ENROLMENT_MS > now().getTime()
        ? mfaSecrets.decryptTotpSecret(secretKeys, operator.id, pending.secret)
        : undefined;
    if (secret === undefined) throw new TesseraError('mfa_enrolment_not_started');
    const step = matchTotp(secret, code, now().getTime(), undefined);
    if (step === undefined || !(await throttle.claimOnce(`totp:${operator.id}:${step}`, 3 * TOTP.stepSeconds * 1000))) {
      throw new TesseraError('mfa_code_invalid', { param: 'code' });
    }
    const recoveryCodes = mfaSecrets.newRecoveryCodes();
    const enabled = await operators.update(operator.id, {
      mfa: {
        secret: pending?.secret ?? '',
        enabledAt: now().toISOString(),
        recoveryCodes: recoveryCodes.map((c) => mfaSecrets.recoveryCodeDigest(secretKeys, operator.id, c)),
        lastStep: step,
      },
      mfaPending: null,
      credentialsChanged: true,
    });
    if (!enabled) throw new TesseraError('admin_session_required');
    // The change ended every session of the operator, this one too: this browser gets a new one.
    await sessions.delete(sessionDigest);
    const started = await startSession(enabled, ip, true);
    await record(ip, { action: 'mfa.enabled', actor: enabled, merchantId: enabled.merchantId });
    return { ...started, recoveryCodes };
  };

  const signOut: AdminSessions['signOut'] = async ({ operator, sessionDigest }, ip) => {
    await sessions.delete(sessionDigest);
    await record(ip, { action: 'logout', actor: operator, merchantId: operator.merchantId });
  };

  const sessionView = (operator: OperatorRecord, session: SessionRecord): SessionView => ({
    operator: operatorView(operator),
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
    mfaRequired,
    mfaEnrolmentRequired: mfaRequired && operator.mfa === undefined,
  });

  return { signIn, authenticate, startMfaEnrolment, confirmMfaEnrolment, signOut, sessionView };
}
