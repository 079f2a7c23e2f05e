import { type AuditLog, type AuditRecord, type DetokenizationLog, type DetokenizationRecord } from '@tessera/merchant-data';
import { z } from 'zod';
import type { Caller } from './caller';
import { merchantInReach, merchantQuerySchema } from './merchants';

/**
 * The two audit trails operators read: the admin audit log (who changed what) and the
 * detokenization log (every /v1/proxy call that rendered card data). Newest first, limited to
 * the merchants the caller may manage.
 */
export const auditQuerySchema = merchantQuerySchema.extend({
  limit: z.coerce
    .number({ error: '"limit" must be an integer from 1 to 1000.' })
    .int({ error: '"limit" must be an integer from 1 to 1000.' })
    .min(1, { error: '"limit" must be an integer from 1 to 1000.' })
    .max(1000, { error: '"limit" must be an integer from 1 to 1000.' })
    .default(100),
});
export type AuditQuery = z.output<typeof auditQuerySchema>;

function scope(caller: Caller, query: AuditQuery): { merchantId?: string; limit: number } {
  const merchantId = merchantInReach(caller, query.merchantId);
  return { ...(merchantId !== undefined ? { merchantId } : {}), limit: query.limit };
}

export async function listAuditEntries(deps: { audit: Pick<AuditLog, 'list'> }, caller: Caller, query: AuditQuery): Promise<AuditRecord[]> {
  return deps.audit.list(scope(caller, query));
}

export async function listDetokenizations(
  deps: { detokenizations: Pick<DetokenizationLog, 'list'> },
  caller: Caller,
  query: AuditQuery,
): Promise<DetokenizationRecord[]> {
  return deps.detokenizations.list(scope(caller, query));
}
