import type { Request, RequestHandler, Response, Router } from 'express';
import { merchantInReach, merchantPathSchema } from '../app/merchants';
import {
  formSigningSecretRequestSchema,
  getReturnUrls,
  parseReturnUrls,
  setReturnUrls,
  showFormSigningSecret,
  type ReturnUrlDeps,
} from '../app/returnUrls';
import { sendJson } from '@tessera/edge';
import { callerOf } from './sessionRoutes';
import { parseBody, parsePath } from './validation';

/**
 * `/admin/v1/merchants/{merchantId}/return-urls` and `…/form-signing-secret`: the hosted payment
 * page's registered URLs and the secret its redirects are signed with. Use cases in app/returnUrls.ts.
 * `depsOf` throws route_not_found when the gateway has no merchant settings store.
 */
export function registerReturnUrlRoutes(api: Router, depsOf: () => ReturnUrlDeps, body: RequestHandler[]): void {
  // Out of reach is said before anything about the body.
  const merchantOf = (req: Request, res: Response): string =>
    merchantInReach(callerOf(res), parsePath(merchantPathSchema, req).merchantId) as string;

  api.get('/merchants/:merchantId/return-urls', async (req: Request, res: Response) => {
    sendJson(res, 200, await getReturnUrls(depsOf(), callerOf(res), merchantOf(req, res)));
  });

  api.put('/merchants/:merchantId/return-urls', ...body, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const returnUrls = parseReturnUrls(req.body as Record<string, unknown>);
    sendJson(res, 200, await setReturnUrls(depsOf(), callerOf(res), merchantId, returnUrls));
  });

  // POST, not GET: showing a secret is a deliberate, CSRF-protected and audited act.
  api.post('/merchants/:merchantId/form-signing-secret', ...body, async (req: Request, res: Response) => {
    const merchantId = merchantOf(req, res);
    const { mode } = parseBody(formSigningSecretRequestSchema, req);
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, await showFormSigningSecret(depsOf(), callerOf(res), merchantId, mode));
  });
}
