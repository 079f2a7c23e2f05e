import crypto from 'node:crypto';

/**
 * An operator logs in to the dashboard. `merchantId` null makes a platform operator who manages
 * every merchant; otherwise the operator sees and changes only that merchant's keys and audit log.
 */
export interface OperatorRecord {
  id: string;
  email: string;
  passwordHash: string;
  merchantId: string | null;
  createdAt: string;
  disabledAt?: string;
  /**
   * Raised whenever the password or the second factor changes: every session and trusted-device
   * token carries the version it was issued under and stops working once it differs. Absent: 0.
   */
  credentialsVersion?: number;
  /** The confirmed second factor; absent until the operator confirms enrolment with a first code. */
  mfa?: OperatorMfa;
  /** A set-up started but not yet confirmed (its secret, sealed like the confirmed one). */
  mfaPending?: { secret: string; startedAt: string };
}

export interface OperatorMfa {
  /** The TOTP secret sealed with AES-256-GCM under a key derived from API_KEY_PEPPER (mfaSecrets.ts). */
  secret: string;
  enabledAt: string;
  /** HMAC digests of the unused recovery codes; a used code is removed. */
  recoveryCodes: string[];
  /** The last TOTP time step accepted: that code and older ones are refused (replay). */
  lastStep?: number;
}

/** The change the stores apply; `credentialsChanged` ends every session of the operator. */
export interface OperatorChange {
  passwordHash?: string;
  disabledAt?: string | null;
  mfa?: OperatorMfa | null;
  mfaPending?: OperatorRecord['mfaPending'] | null;
  credentialsChanged?: boolean;
}

export function credentialsVersionOf(op: Pick<OperatorRecord, 'credentialsVersion'>): number {
  return op.credentialsVersion ?? 0;
}

export function applyOperatorChange(op: OperatorRecord, change: OperatorChange): void {
  if (change.passwordHash !== undefined) op.passwordHash = change.passwordHash;
  if (change.disabledAt === null) delete op.disabledAt;
  else if (change.disabledAt !== undefined) op.disabledAt = change.disabledAt;
  if (change.mfa === null) delete op.mfa;
  else if (change.mfa !== undefined) op.mfa = change.mfa;
  if (change.mfaPending === null) delete op.mfaPending;
  else if (change.mfaPending !== undefined) op.mfaPending = change.mfaPending;
  if (change.credentialsChanged) op.credentialsVersion = credentialsVersionOf(op) + 1;
}

export interface OperatorView {
  id: string;
  email: string;
  merchantId: string | null;
  mfaEnabled: boolean;
  /** Unused recovery codes left; null without a second factor. */
  recoveryCodesLeft: number | null;
}

/** What the dashboard and `admin list --json` show: never the hash, the secret or the code digests. */
export function operatorView(op: OperatorRecord): OperatorView {
  return {
    id: op.id,
    email: op.email,
    merchantId: op.merchantId,
    mfaEnabled: op.mfa !== undefined,
    recoveryCodesLeft: op.mfa ? op.mfa.recoveryCodes.length : null,
  };
}

const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** Emails are identifiers here, not mail addresses we send to: case-insensitive, trimmed. */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

export function isValidEmail(value: string): boolean {
  return value.length <= 320 && EMAIL_PATTERN.test(value);
}

export function generateOperatorId(): string {
  return `op_${crypto.randomBytes(12).toString('base64url')}`;
}

export function canManageMerchant(op: Pick<OperatorRecord, 'merchantId'>, merchantId: string): boolean {
  return op.merchantId === null || op.merchantId === merchantId;
}

export function newOperatorRecord(params: { email: string; passwordHash: string; merchantId: string | null; now: Date }): OperatorRecord {
  return {
    id: generateOperatorId(),
    email: normalizeEmail(params.email),
    passwordHash: params.passwordHash,
    merchantId: params.merchantId,
    createdAt: params.now.toISOString(),
  };
}

/** The throttle bucket of an account: a digest, so store keys do not list who tried to log in. */
export function loginAccountBucket(email: string): string {
  return crypto.createHash('sha256').update(normalizeEmail(email)).digest('hex').slice(0, 32);
}
