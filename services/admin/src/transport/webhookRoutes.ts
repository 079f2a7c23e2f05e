import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import { EVENT_TYPES } from '@tessera/merchant-data';
import { sendJson, setServiceHeaders } from '@tessera/edge';
import { merchantInReach, merchantPathSchema } from '../app/merchants';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  enableWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  parseSecretOverlap,
  parseWebhookEndpointInput,
  resendWebhookEvent,
  rotateWebhookSecret,
  webhookDeliveriesQuerySchema,
  webhookDeliveryPathSchema,
  webhookEndpointPathSchema,
  webhookModeQuerySchema,
  type WebhookEndpointDeps,
} from '../app/webhookEndpoints';
import { callerOf } from './sessionRoutes';
import { parsePath, parseQuery } from './validation';

const BASE = '/merchants/:merchantId/webhook-endpoints';

/**
 * `/admin/v1/merchants/{merchantId}/webhook-endpoints…?mode=`: a merchant's webhook endpoints of one
 * mode, their recent deliveries and resends (app/webhookEndpoints.ts). `deps` undefined: no
 * endpoint store is wired, every route answers 404.
 */
export function registerWebhookRoutes(
  api: Router,
  deps: WebhookEndpointDeps | undefined,
  bodies: { body: RequestHandler[]; optionalBody: RequestHandler[] },
): void {
  const { body, optionalBody } = bodies;
  const depsOf = (): WebhookEndpointDeps => {
    if (deps === undefined) throw new TesseraError('route_not_found');
    return deps;
  };
  // Out of reach is said before anything about the query, the path or the body.
  const merchantOf = (req: Request, res: Response): string =>
    merchantInReach(callerOf(res), parsePath(merchantPathSchema, req).merchantId) as string;
  const modeOf = (req: Request) => parseQuery(webhookModeQuerySchema, req).mode;
  const endpointOf = (req: Request) => parsePath(webhookEndpointPathSchema, req).endpointId;
  // The secret is in these answers once: no cache may keep it.
  const sendSecret = (res: Response, status: number, result: { endpoint: object; secret: string }) => {
    res.setHeader('cache-control', 'no-store');
    sendJson(res, status, { ...result.endpoint, secret: result.secret });
  };

  api.get(BASE, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const mode = modeOf(req);
    const endpoints = await listWebhookEndpoints(depsOf(), callerOf(res), merchantId, mode);
    // The types an endpoint may subscribe to, so the dashboard offers exactly the catalogue.
    sendJson(res, 200, { object: 'list', merchantId, mode, data: endpoints, hasMore: false, eventTypes: EVENT_TYPES });
  });

  api.post(BASE, ...body, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const mode = modeOf(req);
    const input = parseWebhookEndpointInput(req.body as Record<string, unknown>, mode);
    sendSecret(res, 201, await createWebhookEndpoint(depsOf(), callerOf(res), merchantId, mode, input));
  });

  api.delete(`${BASE}/:endpointId`, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    await deleteWebhookEndpoint(depsOf(), callerOf(res), merchantId, modeOf(req), endpointOf(req));
    setServiceHeaders(res);
    res.status(204).end();
  });

  api.post(`${BASE}/:endpointId/rotate-secret`, ...optionalBody, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const mode = modeOf(req);
    const id = endpointOf(req);
    const overlap = parseSecretOverlap(req.body as Record<string, unknown>);
    sendSecret(res, 200, await rotateWebhookSecret(depsOf(), callerOf(res), merchantId, mode, id, overlap));
  });

  api.post(`${BASE}/:endpointId/enable`, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const { endpoint } = await enableWebhookEndpoint(depsOf(), callerOf(res), merchantId, modeOf(req), endpointOf(req));
    sendJson(res, 200, endpoint);
  });

  api.get(`${BASE}/:endpointId/deliveries`, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const { mode, limit } = parseQuery(webhookDeliveriesQuerySchema, req);
    const result = await listWebhookDeliveries(depsOf(), callerOf(res), merchantId, mode, endpointOf(req), limit);
    sendJson(res, 200, { object: 'list', ...result });
  });

  api.post(`${BASE}/:endpointId/deliveries/:eventId/resend`, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const mode = modeOf(req);
    const { endpointId, eventId } = parsePath(webhookDeliveryPathSchema, req);
    sendJson(res, 202, await resendWebhookEvent(depsOf(), callerOf(res), merchantId, mode, endpointId, eventId));
  });
}
