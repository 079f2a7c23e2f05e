import { type AuditInput, type AuditLog, buildAuditRecord } from '@tessera/merchant-data';

/** Who acts in a use case: recorded in the audit log, and limited to the merchants they may manage. */
export interface Caller {
  actor: { id: string; email: string };
  /** The caller's address for the audit log; undefined for the CLI. */
  ip: string | undefined;
  /** The one merchant the caller acts for; null: any (platform operators, the CLI). */
  merchantId: string | null;
}

/** One entry in the admin audit log, as done by `caller` now. */
export async function auditAs(
  deps: { audit: Pick<AuditLog, 'append'>; now: () => Date },
  caller: Caller,
  input: Omit<AuditInput, 'now' | 'ip' | 'actor'>,
): Promise<void> {
  await deps.audit.append(buildAuditRecord({ ...input, actor: caller.actor, ip: caller.ip, now: deps.now() }));
}
