import type { Request, Response } from 'express';
import {
  createFormSession,
  formSessionJson,
  getFormSession,
  listFormSessions,
  type FormSessionDeps,
  type FormSessionListJson,
} from '../app/formSessions';
import { sendJson } from '@tessera/edge';
import { apiKeyOf } from '@tessera/edge';

/**
 * POST and GET /v1/form-sessions and GET /v1/form-sessions/{id}: secret-key routes (a publishable key is
 * refused by authentication with 403 before these run). The use cases are in app/formSessions.ts.
 */
export function formSessionRoutes(deps: FormSessionDeps) {
  return {
    async create(req: Request, res: Response): Promise<void> {
      const record = await createFormSession(deps, apiKeyOf(res), req.body as Record<string, unknown>);
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 201, formSessionJson(record, deps.fieldsOrigin, deps.now()));
    },

    async list(req: Request, res: Response): Promise<void> {
      const { sessions, hasMore } = await listFormSessions(deps, apiKeyOf(res), req.query as Record<string, unknown>);
      const now = deps.now();
      const answer: FormSessionListJson = {
        object: 'list',
        data: sessions.map((s) => formSessionJson(s, deps.fieldsOrigin, now)),
        hasMore,
      };
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, answer);
    },

    async get(req: Request, res: Response): Promise<void> {
      const record = await getFormSession(deps, apiKeyOf(res), String(req.params.id ?? ''));
      res.setHeader('cache-control', 'no-store');
      sendJson(res, 200, formSessionJson(record, deps.fieldsOrigin, deps.now()));
    },
  };
}
