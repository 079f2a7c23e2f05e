import type { Request, Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { routeOf } from './requestContext';

/**
 * tessera_http_requests_total{method,route,status} and tessera_http_request_duration_seconds.
 * `route` is the matched pattern (`/v1/token/:token`), never the path, which could hold a token
 * or whatever a client typed; unmatched requests share one label value.
 */
export function httpMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'tessera_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'tessera_http_request_duration_seconds',
    help: 'Time to answer, PSP time included for /v1/proxy',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const KNOWN_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
  /** Called once the response has been handed to the OS ('finish'), with the time the request arrived. */
  return (req: Request, res: Response, startedAt: bigint): void => {
    const method = KNOWN_METHODS.has(req.method) ? req.method : 'OTHER';
    const route = routeOf(req) ?? 'unmatched';
    requests.inc({ method, route, status: String(res.statusCode) });
    duration.observe({ method, route }, Number(process.hrtime.bigint() - startedAt) / 1e9);
  };
}
