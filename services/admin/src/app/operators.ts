import { type AuditLog } from '@tessera/merchant-data';
import { TesseraError } from '@tessera/common';
import { loginAccountBucket, newOperatorRecord, normalizeEmail, type OperatorRecord } from '../domain/operators';
import { hashPassword, passwordProblem } from '../domain/passwords';
import type { LoginThrottle, OperatorStore } from '../store/adminStores';
import { auditAs, type Caller } from './caller';

/**
 * Dashboard operator accounts: create, change the password, disable or enable, lift a sign-in
 * lock, reset a lost second factor. The operators CLI and the development operator of `npm start`
 * call these; a credential change ends every session of the operator (the session check compares
 * credential versions, app/adminSessions.ts).
 */
export interface OperatorDeps {
  operators: OperatorStore;
  audit: Pick<AuditLog, 'append'>;
  now: () => Date;
}

function checkedPassword(password: string): string {
  const problem = passwordProblem(password);
  if (problem !== undefined) throw new TesseraError('parameter_invalid', { param: 'password', message: `the password ${problem}` });
  return password;
}

/** Functions taking an email answer undefined when no operator has it. */
function operatorByEmail(deps: Pick<OperatorDeps, 'operators'>, email: string): Promise<OperatorRecord | undefined> {
  return deps.operators.findByEmail(normalizeEmail(email));
}

export async function createOperator(
  deps: Pick<OperatorDeps, 'operators' | 'now'>,
  input: { email: string; password: string; merchantId: string | null },
): Promise<{ created: true; operator: OperatorRecord } | { created: false; email: string }> {
  const passwordHash = await hashPassword(checkedPassword(input.password));
  const op = newOperatorRecord({ email: normalizeEmail(input.email), passwordHash, merchantId: input.merchantId, now: deps.now() });
  return (await deps.operators.create(op)) ? { created: true, operator: op } : { created: false, email: op.email };
}

/** A new password ends every session of the operator (PCI DSS 8.2.x: credentials changed). */
export async function setOperatorPassword(
  deps: Pick<OperatorDeps, 'operators'>,
  email: string,
  password: string,
): Promise<OperatorRecord | undefined> {
  const passwordHash = await hashPassword(checkedPassword(password));
  const op = await operatorByEmail(deps, email);
  if (!op) return undefined;
  return (await deps.operators.update(op.id, { passwordHash, credentialsChanged: true })) ?? op;
}

/** A disabled operator's sign-ins are refused and their sessions end at their next request. */
export async function setOperatorDisabled(deps: OperatorDeps, email: string, disabled: boolean): Promise<OperatorRecord | undefined> {
  const op = await operatorByEmail(deps, email);
  if (!op) return undefined;
  return (await deps.operators.update(op.id, { disabledAt: disabled ? deps.now().toISOString() : null })) ?? op;
}

export async function listOperators(deps: Pick<OperatorDeps, 'operators'>): Promise<OperatorRecord[]> {
  return deps.operators.list();
}

/** Lifts the account's sign-in lock (not the blocks of the sources that failed); audited. */
export async function unlockOperator(
  deps: OperatorDeps & { throttle: LoginThrottle },
  caller: Caller,
  email: string,
): Promise<{ operator: OperatorRecord; wasLocked: boolean } | undefined> {
  const op = await operatorByEmail(deps, email);
  if (!op) return undefined;
  const bucket = `acct:${loginAccountBucket(op.email)}`;
  const wasLocked = (await deps.throttle.lockRemainingMs(bucket)) > 0;
  await deps.throttle.unlock(bucket);
  await deps.throttle.reset(bucket);
  await auditAs(deps, caller, { action: 'login.unlocked', merchantId: op.merchantId, details: { operator: op.email, wasLocked } });
  return { operator: op, wasLocked };
}

/** A lost authenticator: the second factor and its recovery codes go, and so do the operator's sessions; audited. */
export async function resetOperatorMfa(deps: OperatorDeps, caller: Caller, email: string): Promise<OperatorRecord | undefined> {
  const op = await operatorByEmail(deps, email);
  if (!op) return undefined;
  const updated = await deps.operators.update(op.id, { mfa: null, mfaPending: null, credentialsChanged: true });
  await auditAs(deps, caller, {
    action: 'mfa.reset',
    merchantId: op.merchantId,
    details: { operator: op.email, hadMfa: op.mfa !== undefined },
  });
  return updated ?? op;
}
