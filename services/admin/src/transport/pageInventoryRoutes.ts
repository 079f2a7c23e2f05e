import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import { sendJson } from '@tessera/edge';
import { merchantInReach, merchantPathSchema } from '../app/merchants';
import {
  acceptPagePolicy,
  authorizePageScript,
  exportPageInventory,
  getPageInventory,
  pageInventoryCsv,
  pageInventoryExportQuerySchema,
  pageInventoryQuerySchema,
  pagePolicyFor,
  pagePolicyQuerySchema,
  parsePolicyAcceptance,
  parseScriptAuthorization,
  type PageInventoryDeps,
  type PagePolicyDeps,
} from '../app/pageInventory';
import { callerOf } from './sessionRoutes';
import { parsePath, parseQuery } from './validation';

export interface PageInventoryRouteDeps {
  /** Absent: the inventory routes answer 404. */
  inventory: PageInventoryDeps | undefined;
  policy: PagePolicyDeps;
}

/**
 * `/admin/v1/merchants/{merchantId}/page-policy` and `…/page-inventory…`: the SAQ A kit
 * (app/pageInventory.ts). Each route parses, calls its use case, answers.
 */
export function registerPageInventoryRoutes(api: Router, deps: PageInventoryRouteDeps, body: RequestHandler[]): void {
  // Out of reach is said before anything about the query or body.
  const merchantOf = (req: Request, res: Response): string =>
    merchantInReach(callerOf(res), parsePath(merchantPathSchema, req).merchantId) as string;
  const inventoryOf = (): PageInventoryDeps => {
    if (deps.inventory === undefined) throw new TesseraError('route_not_found');
    return deps.inventory;
  };

  api.get('/merchants/:merchantId/page-policy', (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const { mode, key } = parseQuery(pagePolicyQuerySchema, req);
    sendJson(res, 200, pagePolicyFor(deps.policy, callerOf(res), merchantId, mode, key));
  });

  api.get('/merchants/:merchantId/page-inventory', async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const { mode } = parseQuery(pageInventoryQuerySchema, req);
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, await getPageInventory(inventoryOf(), callerOf(res), merchantId, mode));
  });

  api.get('/merchants/:merchantId/page-inventory/export', async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const { mode, format } = parseQuery(pageInventoryExportQuerySchema, req);
    const evidence = await exportPageInventory(inventoryOf(), callerOf(res), merchantId, mode);
    const name = `page-inventory-${evidence.merchantId}-${mode}-${evidence.exportedAt.slice(0, 10)}.${format}`;
    res.setHeader('cache-control', 'no-store');
    res.setHeader('content-disposition', `attachment; filename="${name}"`);
    if (format === 'json') return sendJson(res, 200, evidence);
    res.status(200).setHeader('content-type', 'text/csv; charset=utf-8');
    res.end(pageInventoryCsv(evidence));
  });

  api.post('/merchants/:merchantId/page-inventory/authorizations', ...body, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const input = parseScriptAuthorization(req.body as Record<string, unknown>);
    sendJson(res, 200, await authorizePageScript(inventoryOf(), callerOf(res), merchantId, input));
  });

  api.post('/merchants/:merchantId/page-inventory/policy-acceptances', ...body, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const input = parsePolicyAcceptance(req.body as Record<string, unknown>);
    sendJson(res, 200, await acceptPagePolicy(inventoryOf(), callerOf(res), merchantId, input));
  });
}
