import type { Request, RequestHandler, Response, Router } from 'express';
import {
  createApiKey,
  listApiKeys,
  parseCreateKeyInput,
  parseRestrictionChanges,
  restrictApiKey,
  revokeApiKey,
  testApiKey,
  type ApiKeyDeps,
  type KeyCaller,
} from '../../app/apiKeys';
import { apiKeyStatus, keyKindOf, type ApiKeyKind, type ApiKeyRecord } from '../../domain/apiKeys';
import type { OperatorRecord } from '../../domain/admin/operators';
import { sendJson } from '../envelope';
import { contextOf } from '../requestContext';
import { optionalString, refuseUnknown, requiredString } from './validation';

export interface KeyView {
  id: string;
  merchantId: string;
  mode: string;
  /** `secret` (tsk_…, server routes) or `publishable` (tpk_…, browser card collection only). */
  kind: ApiKeyKind;
  /** Prefix and last four characters: enough to recognise a key, never enough to use it. */
  key: string;
  allowedCidrs: string[];
  allowedDomains: string[];
  /** Publishable keys' exact origins; always empty for a secret key. */
  allowedOrigins: string[];
  /** `expired`: its scheduled expiry (overlapping rotation) has passed. */
  status: 'active' | 'revoked' | 'expired';
  createdAt: string;
  updatedAt: string | null;
  revokedAt: string | null;
  /** When a scheduled expiry refuses the key (`keys revoke <id> --after`); null: none. */
  expiresAt: string | null;
  lastUsedAt: string | null;
  lastUsedIp: string | null;
}

export function keyView(r: ApiKeyRecord, now: Date = new Date()): KeyView {
  return {
    id: r.id,
    merchantId: r.merchantId,
    mode: r.mode,
    kind: keyKindOf(r),
    key: `${r.prefix}…${r.last4}`,
    allowedCidrs: r.allowedCidrs,
    allowedDomains: r.allowedDomains ?? [],
    allowedOrigins: r.allowedOrigins ?? [],
    status: apiKeyStatus(r, now),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt ?? null,
    revokedAt: r.revokedAt ?? null,
    expiresAt: r.expiresAt ?? null,
    lastUsedAt: r.lastUsedAt ?? null,
    lastUsedIp: r.lastUsedIp ?? null,
  };
}

export interface KeyRouteHelpers {
  deps: ApiKeyDeps;
  body: RequestHandler[];
  operatorOf: (res: Response) => OperatorRecord;
  /** The merchant a request is about: a merchant operator's own, or the one a platform operator names. */
  merchantFor: (operator: OperatorRecord, requested: string | undefined, param: string) => string | undefined;
  queryString: (req: Request, name: string) => string | undefined;
}

/** `/admin/v1/keys…`: each route parses the request, calls its use case in app/apiKeys.ts, and answers. */
export function registerKeyRoutes(api: Router, { deps, body, operatorOf, merchantFor, queryString }: KeyRouteHelpers): void {
  const callerOf = (res: Response): KeyCaller => {
    const operator = operatorOf(res);
    return { actor: operator, ip: contextOf(res).clientIp, merchantId: operator.merchantId };
  };

  api.get('/keys', async (req, res) => {
    const merchantId = merchantFor(operatorOf(res), queryString(req, 'merchantId'), 'merchantId');
    const keys = await listApiKeys(deps, callerOf(res), merchantId === undefined ? {} : { merchantId });
    sendJson(res, 200, { keys: keys.map((k) => keyView(k, deps.now())) });
  });

  api.post('/keys', ...body, async (req: Request, res: Response) => {
    const input = req.body as Record<string, unknown>;
    const merchantId = merchantFor(operatorOf(res), optionalString(input, 'merchantId', 64), 'merchantId');
    const { apiKey, record } = await createApiKey(deps, callerOf(res), parseCreateKeyInput({ ...input, merchantId }));
    // The only time the key exists outside the merchant's hands: shown once, never stored.
    sendJson(res, 201, { apiKey, key: keyView(record, deps.now()) });
  });

  api.patch('/keys/:id', ...body, async (req: Request, res: Response) => {
    const input = req.body as Record<string, unknown>;
    const { record } = await restrictApiKey(deps, callerOf(res), String(req.params.id), parseRestrictionChanges(input));
    sendJson(res, 200, { key: keyView(record, deps.now()) });
  });

  api.post('/keys/:id/revoke', async (req: Request, res: Response) => {
    const { record } = await revokeApiKey(deps, callerOf(res), String(req.params.id));
    sendJson(res, 200, { key: keyView(record, deps.now()) });
  });

  // Step 3 of the rotation: the same decision the gateway makes for a /v1 request, for a key the
  // operator pastes, as if sent from the given address (default: this browser's own address).
  api.post('/keys/test', ...body, async (req: Request, res: Response) => {
    const input = req.body as Record<string, unknown>;
    refuseUnknown(input, ['apiKey', 'clientIp', 'origin']);
    const apiKey = requiredString(input, 'apiKey', 100);
    const clientIp = optionalString(input, 'clientIp', 64)?.trim();
    const origin = optionalString(input, 'origin', 300);
    const result = await testApiKey(deps, callerOf(res), {
      apiKey,
      ...(clientIp !== undefined ? { clientIp } : {}),
      ...(origin !== undefined ? { origin } : {}),
    });
    sendJson(res, 200, {
      accepted: result.accepted,
      status: result.status,
      code: result.code,
      message: result.message,
      clientIp: result.clientIp ?? null,
      origin: result.origin ?? null,
      key: result.record ? keyView(result.record, deps.now()) : null,
    });
  });
}
