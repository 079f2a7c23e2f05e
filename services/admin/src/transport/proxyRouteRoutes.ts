import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { TesseraError } from '@tessera/common';
import { errorFromBodyParser, sendJson, setServiceHeaders } from '@tessera/edge';
import { merchantInReach, merchantPathSchema } from '../app/merchants';
import {
  applyProxyRoute,
  applyProxyRouteFile,
  listProxyRoutesInReach,
  parseRouteFileInput,
  routeAsYaml,
  routeFileMerchant,
  routeFileQuerySchema,
  routeListQuerySchema,
  deleteProxyRoute,
  dryRunProxyRoute,
  dryRunRequestSchema,
  getProxyRoute,
  listProxyRoutes,
  parseRouteInput,
  routePathSchema,
  type ProxyRouteDeps,
  type RouteListDeps,
} from '../app/proxyRoutes';
import { callerOf } from './sessionRoutes';
import { parseBody, parsePath, parseQuery } from './validation';

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

/** The media types a route file may be sent as: JSON is YAML, so one parser reads both. */
const ROUTE_FILE_TYPES = new Set(['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

/**
 * A route file's body as text (YAML or JSON), after authentication like jsonObjectBody: 415 for
 * another type, 413 over the limit, body-parser's failures mapped without the body (it may hold card data).
 */
export function routeFileBody(limitBytes: number): RequestHandler[] {
  const read = express.text({ limit: limitBytes, type: () => true, defaultCharset: 'utf-8' });
  const routeFile: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (!ROUTE_FILE_TYPES.has(type)) {
      throw new TesseraError('unsupported_media_type', {
        message: 'A route file is sent as application/yaml (or text/yaml) or application/json.',
      });
    }
    read(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) return next(errorFromBodyParser(err) ?? err);
      if (typeof req.body !== 'string' || req.body.trim() === '') {
        return next(new TesseraError('parameter_missing', { message: 'The request body is the route file: YAML or JSON.' }));
      }
      next();
    });
  };
  return [routeFile];
}

/**
 * `/admin/v1/routes`: the interface issue 28 names for routes as code, over the same use cases as
 * the per-merchant paths above (app/proxyRoutes.ts). `POST` applies a whole file (YAML or JSON,
 * as `npm run routes -- apply`) to `?merchantId=`; `GET` lists one merchant's routes or those of
 * every merchant in reach; `/routes/{merchantId}/{routeId}[/dry-run]` show, delete and dry-run one.
 */
export function registerRouteFileRoutes(
  api: Router,
  deps: (ProxyRouteDeps & RouteListDeps) | undefined,
  bodies: { body: RequestHandler[]; fileBody: RequestHandler[] },
): void {
  const depsOf = () => {
    if (deps === undefined) throw new TesseraError('route_not_found');
    return deps;
  };
  const routeOf = (req: Request, res: Response) => {
    merchantInReach(callerOf(res), parsePath(merchantPathSchema, req).merchantId);
    return parsePath(routePathSchema, req);
  };

  api.get('/routes', async (req: Request, res: Response) => {
    const { merchantId } = parseQuery(routeListQuerySchema, req);
    sendJson(res, 200, { routes: await listProxyRoutesInReach(depsOf(), callerOf(res), merchantId) });
  });

  api.post(
    '/routes',
    (req: Request, res: Response, next: NextFunction) => {
      // Reach and the merchant are said before the body is read.
      const merchantId = routeFileMerchant(callerOf(res), parseQuery(routeFileQuerySchema, req).merchantId);
      depsOf();
      res.locals.routeFileMerchant = merchantId;
      next();
    },
    ...bodies.fileBody,
    async (req: Request, res: Response) => {
      const merchantId = res.locals.routeFileMerchant as string;
      const routes = parseRouteFileInput(req.body as string);
      const applied = await applyProxyRouteFile(depsOf(), callerOf(res), merchantId, routes);
      const created = applied.some((a) => a.outcome === 'created');
      sendJson(res, created ? 201 : 200, {
        merchantId,
        routes: applied.map((a) => ({ ...a.stored, outcome: a.outcome, changed: a.changed })),
      });
    },
  );

  api.get('/routes/:merchantId/:routeId', async (req: Request, res: Response) => {
    const { merchantId, routeId } = routeOf(req, res);
    const stored = await getProxyRoute(depsOf(), callerOf(res), merchantId, routeId);
    sendJson(res, 200, { merchantId, ...stored, yaml: routeAsYaml(stored.route) });
  });

  api.delete('/routes/:merchantId/:routeId', async (req: Request, res: Response) => {
    const { merchantId, routeId } = routeOf(req, res);
    await deleteProxyRoute(depsOf(), callerOf(res), merchantId, routeId);
    setServiceHeaders(res);
    res.status(204).end();
  });

  api.post('/routes/:merchantId/:routeId/dry-run', ...bodies.body, async (req: Request, res: Response) => {
    const { merchantId, routeId } = routeOf(req, res);
    const sample = parseBody(dryRunRequestSchema, req);
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, await dryRunProxyRoute(depsOf(), callerOf(res), merchantId, routeId, sample));
  });
}
