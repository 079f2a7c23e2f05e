import { once } from 'node:events';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { TesseraError, type Cidr, type Logger } from '@tessera/common';
import { chooseRequestId, contextOf, errorHandler, readBoundedBody, resolveClientIp, sendJson, setContext } from '@tessera/edge';
import { serveInbound, type InboundDeps, type InboundOutcome } from '../app/serveInbound';
import type { UpstreamHeader } from '../app/ports';
import { clientResponseHeaders } from '../domain/forwardHeaders';

export interface InboundAppDeps {
  inbound: InboundDeps;
  logger: Logger;
  /** INBOUND_MAX_BODY_BYTES: a larger body is 413 and nothing is forwarded. */
  maxBodyBytes: number;
  trustedProxies: readonly Cidr[];
  metrics?: Registry;
  readyChecks?: Record<string, () => Promise<boolean>>;
}

/** tessera_inbound_requests_total{outcome,status}: outcome and status only, never a merchant, route, path or card. */
function inboundMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'tessera_inbound_requests_total',
    help: 'Inbound route requests answered, by outcome (forwarded, forwarded_card, forwarded_redacted, or the error code) and status',
    labelNames: ['outcome', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'tessera_inbound_request_duration_seconds',
    help: "Time to the answer's end, the upstream's time included",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return (outcome: string, status: number, startedAt: bigint): void => {
    requests.inc({ outcome, status: String(status) });
    duration.observe(Number(process.hrtime.bigint() - startedAt) / 1e9);
  };
}

function headersOf(req: Request): UpstreamHeader[] {
  const out: UpstreamHeader[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    out.push({ name: req.rawHeaders[i] as string, value: req.rawHeaders[i + 1] as string });
  return out;
}

/**
 * INBOUND_PORT: every path and host is a merchant's inbound route, except /healthz and /readyz
 * (which no route may take). Service-made answers are the documented envelope with
 * `x-tessera-error`; an upstream's answer is passed on as it came (status, headers minus
 * hop-by-hop ones, body streamed).
 */
export function createInboundApp(deps: InboundAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const record = deps.metrics ? inboundMetrics(deps.metrics) : undefined;

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = chooseRequestId(req.headers['x-request-id']);
    const startedAt = process.hrtime.bigint();
    setContext(res, { requestId, startedAt });
    next();
  });

  app.get('/healthz', (_req: Request, res: Response) => {
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, { status: 'ok' });
  });

  app.get('/readyz', async (_req: Request, res: Response) => {
    const entries = Object.entries(deps.readyChecks ?? {});
    const results = await Promise.all(entries.map(([, check]) => check().catch(() => false)));
    const checks = Object.fromEntries(entries.map(([name], i) => [name, results[i] ? 'ok' : 'unavailable']));
    const ready = results.every(Boolean);
    if (!ready) deps.logger.warn({ requestId: contextOf(res).requestId, checks }, 'not ready');
    sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks });
  });

  app.use(async (req: Request, res: Response, next: NextFunction) => {
    const { requestId, startedAt } = contextOf(res);
    // The sender gone: the upstream call is cancelled with it.
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    let outcome: InboundOutcome | string = 'internal_error';
    let logged: Record<string, unknown> = {};
    try {
      const target = req.originalUrl;
      const q = target.indexOf('?');
      const body = await readBoundedBody(req, deps.maxBodyBytes);
      const result = await serveInbound(deps.inbound, {
        method: req.method,
        path: q < 0 ? target : target.slice(0, q),
        query: q < 0 ? '' : target.slice(q + 1),
        host: req.headers.host,
        headers: headersOf(req),
        body,
        clientIp: resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], deps.trustedProxies),
        proto: req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http',
        requestId,
        signal: aborted.signal,
      });
      outcome = result.outcome;
      logged = { merchantId: result.owner.merchantId, routeId: result.owner.routeId };
      res.statusCode = result.answer.status;
      for (const h of clientResponseHeaders(result.answer.headers)) res.appendHeader(h.name, h.value);
      for await (const chunk of result.answer.body) {
        if (!res.write(chunk)) await once(res, 'drain');
      }
      res.end();
    } catch (err) {
      if (err instanceof TesseraError) outcome = err.code;
      next(err);
    } finally {
      record?.(outcome, res.statusCode, startedAt);
      // Route and outcome only: a path or a query may hold what a sender typed.
      deps.logger.info(
        {
          method: req.method,
          status: res.statusCode,
          outcome,
          ...logged,
          ms: Math.round(Number(process.hrtime.bigint() - startedAt) / 1e5) / 10,
          requestId,
        },
        'inbound request',
      );
    }
  });

  app.use(errorHandler(deps.logger));
  return app;
}
