import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import { sendJson, setServiceHeaders } from '@tessera/edge';
import { merchantPathSchema } from '../app/merchants';
import {
  approveExport,
  cancelExport,
  exportOrderPathSchema,
  exportRequestSchema,
  getExportOrder,
  listExportOrders,
  listRecipients,
  openExportFile,
  recipientPathSchema,
  recipientRegistrationSchema,
  registerRecipient,
  removeRecipient,
  requestExport,
  type CardExportDeps,
} from '../app/cardExports';
import type { TwoOperatorCaller } from '../app/twoOperatorOrders';
import { adminOf, callerOf } from './sessionRoutes';
import { parseBody, parsePath } from './validation';

/**
 * Card exports (app/cardExports.ts): `/admin/v1/merchants/{merchantId}/export-recipients`,
 * `…/export-requests` and `/admin/v1/export-orders/…`, the file included. Absent deps: 404.
 */
export function registerExportRoutes(api: Router, deps: CardExportDeps | undefined, body: RequestHandler[]): void {
  const depsOf = (): CardExportDeps => {
    if (deps === undefined) throw new TesseraError('route_not_found');
    return deps;
  };
  const operatorOf = (res: Response): TwoOperatorCaller => ({ ...callerOf(res), mfaEnabled: adminOf(res).operator.mfa !== undefined });
  const orderIdOf = (req: Request): string => parsePath(exportOrderPathSchema, req).orderId;

  api.post('/merchants/:merchantId/export-recipients', ...body, async (req: Request, res: Response) => {
    const { merchantId } = parsePath(merchantPathSchema, req);
    const caller = operatorOf(res);
    sendJson(res, 201, await registerRecipient(depsOf(), caller, merchantId, parseBody(recipientRegistrationSchema, req)));
  });

  api.get('/merchants/:merchantId/export-recipients', async (req: Request, res: Response) => {
    const { merchantId } = parsePath(merchantPathSchema, req);
    sendJson(res, 200, { recipients: await listRecipients(depsOf(), operatorOf(res), merchantId) });
  });

  api.delete('/merchants/:merchantId/export-recipients/:fingerprint', async (req: Request, res: Response) => {
    const { merchantId, fingerprint } = parsePath(recipientPathSchema, req);
    await removeRecipient(depsOf(), operatorOf(res), merchantId, fingerprint);
    setServiceHeaders(res);
    res.status(204).end();
  });

  api.post('/merchants/:merchantId/export-requests', ...body, async (req: Request, res: Response) => {
    const { merchantId } = parsePath(merchantPathSchema, req);
    const caller = operatorOf(res);
    sendJson(res, 201, await requestExport(depsOf(), caller, merchantId, parseBody(exportRequestSchema, req)));
  });

  api.get('/export-orders', async (_req: Request, res: Response) => {
    sendJson(res, 200, { orders: await listExportOrders(depsOf(), operatorOf(res)) });
  });

  api.get('/export-orders/:orderId', async (req: Request, res: Response) => {
    sendJson(res, 200, await getExportOrder(depsOf(), operatorOf(res), orderIdOf(req)));
  });

  api.post('/export-orders/:orderId/approve', async (req: Request, res: Response) => {
    sendJson(res, 200, await approveExport(depsOf(), operatorOf(res), orderIdOf(req)));
  });

  api.post('/export-orders/:orderId/cancel', async (req: Request, res: Response) => {
    sendJson(res, 200, await cancelExport(depsOf(), operatorOf(res), orderIdOf(req)));
  });

  // The ciphertext only, streamed chunk by chunk from Redis: this service cannot decrypt it.
  api.get('/export-orders/:orderId/file', async (req: Request, res: Response) => {
    const { order, chunks } = await openExportFile(depsOf(), operatorOf(res), orderIdOf(req));
    setServiceHeaders(res);
    res.status(200);
    res.setHeader('content-type', 'application/pgp-encrypted');
    res.setHeader('content-disposition', `attachment; filename="${order.id}.${order.format === 'csv' ? 'csv' : 'jsonl'}.pgp"`);
    if (order.bytes !== undefined) res.setHeader('content-length', String(order.bytes));
    for await (const chunk of chunks) {
      if (!res.write(chunk)) await new Promise<void>((resolve) => res.once('drain', resolve));
    }
    res.end();
  });
}
