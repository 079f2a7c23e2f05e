import crypto from 'node:crypto';
import { loginAccountBucket } from './operators';

/**
 * Sign-in lockout (PCI DSS 8.3.4: at most 10 invalid attempts, then at least 30 minutes locked),
 * counted so that an outsider cannot keep an operator out:
 * - failures are counted in a sliding window per account and per source *for that account*
 *   (a source is the client address, or the trusted device when the browser has one);
 * - a source is blocked for the account after `maxPerSource` failures, before the account
 *   itself locks after `maxPerAccount` failures from all sources together;
 * - a browser that completed a sign-in with the second factor carries a trusted-device token: the
 *   account lock does not apply to it (its own source block does), so the operator keeps
 *   working while an attacker with many addresses holds the account locked for everybody else.
 * Attempts refused by a lock are not evaluated and not counted, so hammering a locked account
 * does not extend the lock. Unknown accounts are counted and locked alike (no account enumeration).
 */
export interface LockoutPolicy {
  windowMs: number;
  lockoutMs: number;
  maxPerAccount: number;
  maxPerSource: number;
}

export function lockoutPolicy(config: {
  ADMIN_LOGIN_WINDOW_SECONDS: number;
  ADMIN_LOGIN_MAX_PER_ACCOUNT: number;
  ADMIN_LOGIN_MAX_PER_SOURCE?: number;
  ADMIN_LOGIN_LOCKOUT_SECONDS?: number;
}): LockoutPolicy {
  const maxPerAccount = config.ADMIN_LOGIN_MAX_PER_ACCOUNT;
  // A single source must be stopped before it alone can lock the account.
  const maxPerSource = Math.max(1, Math.min(config.ADMIN_LOGIN_MAX_PER_SOURCE ?? 5, maxPerAccount - 1));
  return {
    windowMs: config.ADMIN_LOGIN_WINDOW_SECONDS * 1000,
    lockoutMs: (config.ADMIN_LOGIN_LOCKOUT_SECONDS ?? 1800) * 1000,
    maxPerAccount,
    maxPerSource,
  };
}

export interface LoginBuckets {
  account: string;
  source: string;
}

/** Store buckets are digests: the store does not list who tried to sign in from where. */
export function loginBuckets(email: string, source: { deviceId?: string; ip: string }): LoginBuckets {
  const account = loginAccountBucket(email);
  const sourceId = source.deviceId !== undefined ? `dev:${source.deviceId}` : `ip:${source.ip}`;
  const sourceDigest = crypto.createHash('sha256').update(`${account}\n${sourceId}`).digest('hex').slice(0, 32);
  return { account: `acct:${account}`, source: `src:${sourceDigest}` };
}

export type LoginBlock = { by: 'source' | 'account'; retryInMs: number } | undefined;

/** Whether an attempt is refused before its password is even checked. */
export function loginBlock(state: { accountLockMs: number; sourceLockMs: number; trustedDevice: boolean }): LoginBlock {
  if (state.sourceLockMs > 0) return { by: 'source', retryInMs: state.sourceLockMs };
  if (state.accountLockMs > 0 && !state.trustedDevice) return { by: 'account', retryInMs: state.accountLockMs };
  return undefined;
}

/** What a failure just counted (failures in the window, this one included) locks. */
export function locksAfterFailure(
  counts: { account: number; source: number },
  policy: LockoutPolicy,
): { account: boolean; source: boolean } {
  return { account: counts.account >= policy.maxPerAccount, source: counts.source >= policy.maxPerSource };
}
