import { type AuditLog, type DetokenizationLog } from '@tessera/merchant-data';
import type { Router } from 'express';
import { TesseraError } from '@tessera/common';
import { auditQuerySchema, listAuditEntries, listDetokenizations } from '../app/auditTrail';
import { sendJson } from '@tessera/edge';
import { callerOf } from './sessionRoutes';
import { parseQuery } from './validation';

/** `/admin/v1/audit` and `/admin/v1/detokenizations` (404 without a detokenization log); use cases in app/auditTrail.ts. */
export function registerAuditRoutes(api: Router, deps: { audit: AuditLog; detokenizations: DetokenizationLog | undefined }): void {
  api.get('/audit', async (req, res) => {
    const query = parseQuery(auditQuerySchema, req);
    sendJson(res, 200, { entries: await listAuditEntries(deps, callerOf(res), query) });
  });

  api.get('/detokenizations', async (req, res) => {
    const detokenizations = deps.detokenizations;
    if (detokenizations === undefined) throw new TesseraError('route_not_found');
    const query = parseQuery(auditQuerySchema, req);
    sendJson(res, 200, { entries: await listDetokenizations({ detokenizations }, callerOf(res), query) });
  });
}
