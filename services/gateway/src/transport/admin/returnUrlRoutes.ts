import type { Request, RequestHandler, Response, Router } from 'express';
import { TesseraError } from '@tessera/common';
import type { KeyCaller } from '../../app/apiKeys';
import { getReturnUrls, parseReturnUrls, setReturnUrls, showFormSigningSecret, type ReturnUrlDeps } from '../../app/returnUrls';
import type { OperatorRecord } from '../../domain/admin/operators';
import { sendJson } from '../envelope';
import { contextOf } from '../requestContext';
import { refuseUnknown } from './validation';

export interface ReturnUrlRouteHelpers {
  /** Throws route_not_found when the gateway has no merchant settings store. */
  depsOf: () => ReturnUrlDeps;
  body: RequestHandler[];
  operatorOf: (res: Response) => OperatorRecord;
  merchantFor: (operator: OperatorRecord, requested: string | undefined, param: string) => string | undefined;
}

/**
 * `/admin/v1/merchants/{merchantId}/return-urls` and `…/form-signing-secret`: the hosted payment
 * page's registered URLs and the secret its redirects are signed with. Use cases in app/returnUrls.ts.
 */
export function registerReturnUrlRoutes(api: Router, { depsOf, body, operatorOf, merchantFor }: ReturnUrlRouteHelpers): void {
  const callerOf = (res: Response): KeyCaller => {
    const operator = operatorOf(res);
    return { actor: operator, ip: contextOf(res).clientIp, merchantId: operator.merchantId };
  };
  const merchantOf = (req: Request, res: Response): string =>
    merchantFor(operatorOf(res), String(req.params.merchantId), 'merchantId') as string;

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
    const input = req.body as Record<string, unknown>;
    refuseUnknown(input, ['mode']);
    if (input.mode !== 'test' && input.mode !== 'live') {
      throw new TesseraError(input.mode === undefined ? 'parameter_missing' : 'parameter_invalid', {
        param: 'mode',
        message: '"mode" must be "test" or "live".',
      });
    }
    res.setHeader('cache-control', 'no-store');
    sendJson(res, 200, await showFormSigningSecret(depsOf(), callerOf(res), merchantId, input.mode));
  });
}
