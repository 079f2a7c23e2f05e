import type { Request, RequestHandler, Response, Router } from 'express';
import {
  createApiKey,
  keyTestRequestSchema,
  listApiKeys,
  parseCreateKeyInput,
  parseRestrictionChanges,
  restrictApiKey,
  revokeApiKey,
  testApiKey,
  type ApiKeyDeps,
} from '../app/apiKeys';
import { parseInput } from '@tessera/edge';
import { merchantInReach, merchantQuerySchema } from '../app/merchants';
import { apiKeyStatus, keyKindOf, type ApiKeyKind, type ApiKeyRecord } from '@tessera/merchant-data';
import { sendJson } from '@tessera/edge';
import { callerOf } from './sessionRoutes';
import { parseBody, parseQuery } from './validation';

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
  /**
   * Set while the key is under card-testing attack (browser tokenizations past its threshold):
   * until when every card needs a proof of work from the shopper's browser. Null: not under attack.
   */
  underAttackUntil: string | null;
}

/** Whether a key is under card-testing attack (BrowserTokenLimiter.attackState). */
export type AttackStateLookup = (keyId: string) => Promise<{ underAttack: boolean; endsInMs: number }>;

export function keyView(r: ApiKeyRecord, now: Date = new Date(), underAttackUntil: string | null = null): KeyView {
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
    underAttackUntil,
  };
}

/** Until when each key is under attack, or null; a store that cannot answer shows no banner rather than no keys. */
async function attackEnds(keys: readonly ApiKeyRecord[], lookup: AttackStateLookup | undefined, now: Date): Promise<(string | null)[]> {
  if (lookup === undefined) return keys.map(() => null);
  return Promise.all(
    keys.map(async (k) => {
      const state = await lookup(k.id).catch(() => undefined);
      return state?.underAttack === true ? new Date(now.getTime() + state.endsInMs).toISOString() : null;
    }),
  );
}

/** `/admin/v1/keys…`: each route parses the request, calls its use case in app/apiKeys.ts, and answers. */
export function registerKeyRoutes(api: Router, deps: ApiKeyDeps, body: RequestHandler[], attackState?: AttackStateLookup): void {
  api.get('/keys', async (req, res) => {
    const caller = callerOf(res);
    const merchantId = merchantInReach(caller, parseQuery(merchantQuerySchema, req).merchantId);
    const keys = await listApiKeys(deps, caller, merchantId === undefined ? {} : { merchantId });
    const now = deps.now();
    const attacks = await attackEnds(keys, attackState, now);
    sendJson(res, 200, { keys: keys.map((k, i) => keyView(k, now, attacks[i] ?? null)) });
  });

  api.post('/keys', ...body, async (req: Request, res: Response) => {
    const input = req.body as Record<string, unknown>;
    const caller = callerOf(res);
    // A merchant operator may leave the merchant out (their own); a cleared form field is the same.
    const given = input.merchantId === null || input.merchantId === '' ? undefined : input.merchantId;
    const named = parseInput(merchantQuerySchema, { merchantId: given }).merchantId;
    const merchantId = merchantInReach(caller, named);
    const { apiKey, record } = await createApiKey(deps, caller, parseCreateKeyInput({ ...input, merchantId }));
    // The only time the key exists outside the merchant's hands: shown once, never stored.
    sendJson(res, 201, { apiKey, key: keyView(record, deps.now()) });
  });

  api.patch('/keys/:id', ...body, async (req: Request, res: Response) => {
    const changes = parseRestrictionChanges(req.body as Record<string, unknown>);
    const { record } = await restrictApiKey(deps, callerOf(res), String(req.params.id), changes);
    sendJson(res, 200, { key: keyView(record, deps.now()) });
  });

  api.post('/keys/:id/revoke', async (req: Request, res: Response) => {
    const { record } = await revokeApiKey(deps, callerOf(res), String(req.params.id));
    sendJson(res, 200, { key: keyView(record, deps.now()) });
  });

  // Step 3 of the rotation: the same decision the gateway makes for a /v1 request, for a key the
  // operator pastes, as if sent from the given address (default: this browser's own address).
  api.post('/keys/test', ...body, async (req: Request, res: Response) => {
    const input = parseBody(keyTestRequestSchema, req);
    const clientIp = input.clientIp ? input.clientIp.trim() : undefined;
    const origin = input.origin ? input.origin : undefined;
    const result = await testApiKey(deps, callerOf(res), {
      apiKey: input.apiKey,
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
