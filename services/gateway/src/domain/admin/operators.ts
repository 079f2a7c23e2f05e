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
}

export interface OperatorView {
  id: string;
  email: string;
  merchantId: string | null;
}

export function operatorView(op: OperatorRecord): OperatorView {
  return { id: op.id, email: op.email, merchantId: op.merchantId };
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
