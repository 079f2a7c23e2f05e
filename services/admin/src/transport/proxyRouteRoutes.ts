import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import { sendJson, setServiceHeaders } from '@tessera/edge';
import { merchantInReach, merchantPathSchema } from '../app/merchants';
import {
  applyProxyRoute,
  deleteProxyRoute,
  dryRunProxyRoute,
  dryRunRequestSchema,
  getProxyRoute,
  listProxyRoutes,
  parseRouteInput,
  routePathSchema,
  type ProxyRouteDeps,
} from '../app/proxyRoutes';
import { callerOf } from './sessionRoutes';
import { parseBody, parsePath } from './validation';

/**
 * `/admin/v1/merchants/{merchantId}/routes[/{routeId}[/dry-run]]`: the merchants' proxy routes
 * (docs/routes.md). Use cases in app/proxyRoutes.ts. Without a route store every route answers 404.
 */
export function registerProxyRouteRoutes(api: Router, deps: ProxyRouteDeps | undefined, body: RequestHandler[]): void {
  const depsOf = (): ProxyRouteDeps => {
    if (deps === undefined) throw new TesseraError('route_not_found');
    return deps;
  };
  // Out of reach is said before anything about the body or the route.
  const merchantOf = (req: Request, res: Response): string =>
    merchantInReach(callerOf(res), parsePath(merchantPathSchema, req).merchantId) as string;
  const routeOf = (req: Request, res: Response) => {
    merchantOf(req, res);
    return parsePath(routePathSchema, req);
  };

  api.get('/merchants/:merchantId/routes', async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    sendJson(res, 200, { merchantId, routes: await listProxyRoutes(depsOf(), callerOf(res), merchantId) });
  });

  api.get('/merchants/:merchantId/routes/:routeId', async (req: Request, res: Response) => {
    const { merchantId, routeId } = routeOf(req, res);
    sendJson(res, 200, await getProxyRoute(depsOf(), callerOf(res), merchantId, routeId));
  });

  api.put('/merchants/:merchantId/routes/:routeId', ...body, async (req: Request, res: Response) => {
    const { merchantId, routeId } = routeOf(req, res);
    const route = parseRouteInput(req.body, routeId);
    const applied = await applyProxyRoute(depsOf(), callerOf(res), merchantId, route);
    sendJson(res, applied.outcome === 'created' ? 201 : 200, { ...applied.stored, outcome: applied.outcome, changed: applied.changed });
  });

  api.delete('/merchants/:merchantId/routes/:routeId', async (req: Request, res: Response) => {
    const { merchantId, routeId } = routeOf(req, res);
    await deleteProxyRoute(depsOf(), callerOf(res), merchantId, routeId);
    setServiceHeaders(res);
    res.status(204).end();
  });

  // POST: the sample is a body; nothing is stored.
  api.post('/merchants/:merchantId/routes/:routeId/dry-run', ...body, async (req: Request, res: Response) => {
    const { merchantId, routeId } = routeOf(req, res);
    const sample = parseBody(dryRunRequestSchema, req);
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, await dryRunProxyRoute(depsOf(), callerOf(res), merchantId, routeId, sample));
  });
}
