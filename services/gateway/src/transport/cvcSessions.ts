import type { Request, Response } from 'express';
import { attachCvcUnderSession, openCvcSession, type CvcSessionDeps } from '../app/cvcSessions';
import { parseBrowserCvcInput, parseCvcSessionCreate } from '../domain/requestSchemas';
import { sendJson } from '@tessera/edge';
import { apiKeyOf, contextOf } from '@tessera/edge';
import { browserCvcJson, cvcSessionJson } from './responseJson';
import { tokenParam } from './routes';

/**
 * The two ends of CVC re-collection in a browser (app/cvcSessions.ts): a secret key opens the
 * grant, the CVC-only field uses it with the publishable key. Each answers with what its caller
 * may see: the grant to the secret key, no card metadata to the browser.
 */
export function cvcSessionRoutes(deps: CvcSessionDeps) {
  return {
    /** POST /v1/token/{token}/cvc-sessions: a secret-key route (a publishable key gets 403 before this runs). */
    async open(req: Request, res: Response): Promise<void> {
      parseCvcSessionCreate(req.body as Record<string, unknown>);
      const opened = await openCvcSession(deps, apiKeyOf(res), tokenParam(req), { requestId: contextOf(res).requestId });
      sendJson(res, 201, cvcSessionJson(opened));
    },

    /** POST /v1/browser/tokens/{token}/cvc: the CVC-only field, under the browser route's rules and a grant. */
    async attachInBrowser(req: Request, res: Response): Promise<void> {
      const input = parseBrowserCvcInput(req.body as Record<string, unknown>);
      const record = await attachCvcUnderSession(deps, apiKeyOf(res), tokenParam(req), input, { requestId: contextOf(res).requestId });
      sendJson(res, 200, browserCvcJson(record));
    },
  };
}
