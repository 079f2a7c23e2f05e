import type { Request, Response } from 'express';
import { openCvcSession, type CvcSessionDeps } from '../app/cvcSessions';
import { parseCvcSessionCreate } from '../domain/requestSchemas';
import { sendJson } from '@tessera/edge';
import { apiKeyOf, contextOf } from '@tessera/edge';
import { cvcSessionJson } from './responseJson';
import { tokenParam } from './routes';

/**
 * The secret key's end of CVC re-collection in a browser (app/cvcSessions.ts): it opens the grant,
 * which the CVC-only field uses on the fields service with the publishable key.
 */
export function cvcSessionRoutes(deps: CvcSessionDeps) {
  return {
    /** POST /v1/token/{token}/cvc-sessions: a secret-key route (a publishable key gets 403 before this runs). */
    async open(req: Request, res: Response): Promise<void> {
      parseCvcSessionCreate(req.body as Record<string, unknown>);
      const opened = await openCvcSession(deps, apiKeyOf(res), tokenParam(req), { requestId: contextOf(res).requestId });
      sendJson(res, 201, cvcSessionJson(opened));
    },
  };
}
