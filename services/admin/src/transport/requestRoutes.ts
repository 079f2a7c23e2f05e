import type { Request, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import {
  getRequest,
  listRequests,
  parseListRequestsQuery,
  parseRequestDetailQuery,
  parseRequestStatsQuery,
  requestStats,
  type LogCaller,
  type RequestLogDeps,
} from '../app/requestLog';
import type { OperatorRecord } from '../domain/operators';
import { sendJson } from '@tessera/edge';

export interface RequestRouteHelpers {
  /** Absent: the gateway keeps no request log (REQUEST_LOG_MAX_ENTRIES=0), and the routes answer 404. */
  deps: RequestLogDeps | undefined;
  operatorOf: (res: Response) => OperatorRecord;
}

/**
 * `/admin/v1/requests…`: the merchant's request log, its entries one by one, and per-minute
 * statistics. Each route parses the query (zod, app/requestLog.ts), calls its use case, answers.
 */
export function registerRequestRoutes(api: Router, { deps, operatorOf }: RequestRouteHelpers): void {
  const depsOf = (): RequestLogDeps => {
    if (deps === undefined) throw new TesseraError('route_not_found');
    return deps;
  };
  const callerOf = (res: Response): LogCaller => ({ merchantId: operatorOf(res).merchantId });
  const queryOf = (req: Request): Record<string, unknown> => ({ ...(req.query as Record<string, unknown>) });

  api.get('/requests', async (req: Request, res: Response) => {
    sendJson(res, 200, await listRequests(depsOf(), callerOf(res), parseListRequestsQuery(queryOf(req))));
  });

  api.get('/requests/stats', async (req: Request, res: Response) => {
    sendJson(res, 200, await requestStats(depsOf(), callerOf(res), parseRequestStatsQuery(queryOf(req))));
  });

  api.get('/requests/:id', async (req: Request, res: Response) => {
    const { merchantId } = parseRequestDetailQuery(queryOf(req));
    sendJson(res, 200, await getRequest(depsOf(), callerOf(res), merchantId, String(req.params.id)));
  });
}
