import type { Request, Response } from 'express';
import { getEvent, listEvents, type EventDeps } from '../app/events';
import { apiKeyOf, sendJson } from '@tessera/edge';

/** GET /v1/events and GET /v1/events/{id}: secret-key routes; the use cases are in app/events.ts. */
export function eventRoutes(deps: EventDeps) {
  return {
    async list(req: Request, res: Response): Promise<void> {
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, await listEvents(deps, apiKeyOf(res), req.query as Record<string, unknown>));
    },

    async get(req: Request, res: Response): Promise<void> {
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, await getEvent(deps, apiKeyOf(res), String(req.params.id ?? '')));
    },
  };
}
