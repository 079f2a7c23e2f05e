import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import { sendJson } from '@tessera/edge';
import { merchantPathSchema } from '../app/merchants';
import {
  approveShred,
  cancelShred,
  getShredOrder,
  listShredOrders,
  requestShred,
  shredOrderPathSchema,
  shredRequestSchema,
  type ShredCaller,
  type ShredOrderDeps,
} from '../app/shredOrders';
import { adminOf, callerOf } from './sessionRoutes';
import { parseBody, parsePath } from './validation';

/**
 * `/admin/v1/merchants/{merchantId}/shred-requests` and `/admin/v1/shred-orders/…`: crypto-shredding
 * with two operators (app/shredOrders.ts). Absent deps (no shred order store): 404.
 */
export function registerShredRoutes(api: Router, deps: ShredOrderDeps | undefined, body: RequestHandler[]): void {
  const depsOf = (): ShredOrderDeps => {
    if (deps === undefined) throw new TesseraError('route_not_found');
    return deps;
  };
  const shredderOf = (res: Response): ShredCaller => ({ ...callerOf(res), mfaEnabled: adminOf(res).operator.mfa !== undefined });
  const orderIdOf = (req: Request): string => parsePath(shredOrderPathSchema, req).orderId;

  api.post('/merchants/:merchantId/shred-requests', ...body, async (req: Request, res: Response) => {
    const { merchantId } = parsePath(merchantPathSchema, req);
    const caller = shredderOf(res);
    const input = parseBody(shredRequestSchema, req);
    sendJson(res, 201, await requestShred(depsOf(), caller, merchantId, input));
  });

  api.get('/shred-orders', async (_req: Request, res: Response) => {
    sendJson(res, 200, { orders: await listShredOrders(depsOf(), shredderOf(res)) });
  });

  api.get('/shred-orders/:orderId', async (req: Request, res: Response) => {
    sendJson(res, 200, await getShredOrder(depsOf(), shredderOf(res), orderIdOf(req)));
  });

  api.post('/shred-orders/:orderId/approve', async (req: Request, res: Response) => {
    sendJson(res, 200, await approveShred(depsOf(), shredderOf(res), orderIdOf(req)));
  });

  api.post('/shred-orders/:orderId/cancel', async (req: Request, res: Response) => {
    sendJson(res, 200, await cancelShred(depsOf(), shredderOf(res), orderIdOf(req)));
  });
}
