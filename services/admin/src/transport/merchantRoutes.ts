import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import {
  getPspHosts,
  listMerchants,
  merchantInReach,
  merchantPathSchema,
  pspHostsSchema,
  setPspHosts,
  type PspHostDeps,
} from '../app/merchants';
import type { OperatorStore } from '../store/adminStores';
import type { ApiKeyStore } from '@tessera/merchant-data';
import { sendJson } from '@tessera/edge';
import { callerOf } from './sessionRoutes';
import { parseBody, parsePath } from './validation';

export interface MerchantRouteDeps {
  keyStore: Pick<ApiKeyStore, 'list'>;
  operators: Pick<OperatorStore, 'list'>;
  /** Absent (no merchant settings store): the psp-hosts routes answer 404. */
  pspHosts: PspHostDeps | undefined;
}

/** `/admin/v1/merchants` and each merchant's PSP host allowlist; use cases in app/merchants.ts. */
export function registerMerchantRoutes(api: Router, deps: MerchantRouteDeps, body: RequestHandler[]): void {
  const pspHostDeps = (): PspHostDeps => {
    if (deps.pspHosts === undefined) throw new TesseraError('route_not_found');
    return deps.pspHosts;
  };

  api.get('/merchants', async (_req, res) => {
    sendJson(res, 200, { merchants: await listMerchants(deps, callerOf(res)) });
  });

  api.get('/merchants/:merchantId/psp-hosts', async (req: Request, res: Response) => {
    const { merchantId } = parsePath(merchantPathSchema, req);
    sendJson(res, 200, await getPspHosts(pspHostDeps(), callerOf(res), merchantId));
  });

  api.put('/merchants/:merchantId/psp-hosts', ...body, async (req: Request, res: Response) => {
    const store = pspHostDeps();
    // Out of reach is said before anything about the body.
    const merchantId = merchantInReach(callerOf(res), parsePath(merchantPathSchema, req).merchantId) as string;
    const { pspHosts } = parseBody(pspHostsSchema(), req);
    sendJson(res, 200, await setPspHosts(store, callerOf(res), merchantId, pspHosts));
  });
}
