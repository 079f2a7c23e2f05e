import { TesseraError } from '@tessera/common';
import type { TokenRecord__Output } from '@tessera/protos';
import type { ApiKeyRecord } from '@tessera/merchant-data';
import { CVC_SESSION_SECRET_PATTERN, cvcSessionDigest, newCvcSessionSecret, type CvcSessionRecord } from '@tessera/merchant-data';
import type { CvcSessionStore } from '@tessera/merchant-data';
import type { VaultApi } from './ports';

/**
 * Re-collecting a CVC in a browser (tessera.cvcField): a merchant's server opens a CVC session
 * for one token with its secret key, and the CVC-only field attaches one CVC under it with the
 * publishable key. Both ends call these; transport only parses and answers.
 */
export interface CvcSessionDeps {
  sessions: CvcSessionStore;
  vault: Pick<VaultApi, 'getToken' | 'attachCvv'>;
  /** CVC_SESSION_TTL_SECONDS. */
  ttlSeconds: number;
  now: () => Date;
}

type TokenOwner = Pick<ApiKeyRecord, 'merchantId' | 'mode'>;

export interface OpenedCvcSession {
  record: CvcSessionRecord;
  /** Shown once, to the secret key's caller; only its digest is stored. */
  secret: string;
}

/**
 * POST /v1/token/{token}/cvc-sessions: only for a token of the key's merchant and mode (else 404
 * token_not_found, as every token route answers), so a grant never names a token its opener
 * cannot see.
 */
export async function openCvcSession(
  deps: CvcSessionDeps,
  key: TokenOwner & Pick<ApiKeyRecord, 'id'>,
  token: string,
  ctx: { requestId: string },
): Promise<OpenedCvcSession> {
  await deps.vault.getToken({ merchantId: key.merchantId, mode: key.mode, token }, ctx);
  const now = deps.now();
  const secret = newCvcSessionSecret();
  const record: CvcSessionRecord = {
    digest: cvcSessionDigest(secret),
    merchantId: key.merchantId,
    mode: key.mode,
    token,
    keyId: key.id,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + deps.ttlSeconds * 1000).toISOString(),
  };
  await deps.sessions.create(record);
  return { record, secret };
}

/**
 * POST /v1/browser/tokens/{token}/cvc: the vault takes the grant (atomically, once) before it stores
 * the CVC, and gives it back if it refuses the CVC, so a mistyped CVC can be corrected under the
 * same grant while two concurrent attaches still cannot both succeed (the vault's app/cvcGrants.ts).
 */
export async function attachCvcUnderSession(
  deps: CvcSessionDeps,
  key: TokenOwner,
  token: string,
  input: { cvv: number | string; cvcSession: string | undefined },
  ctx: { requestId: string },
): Promise<TokenRecord__Output> {
  // Never an attach without a grant: the vault would take that as the merchant's own server's.
  if (input.cvcSession === undefined) throw new TesseraError('cvc_session_required', { param: 'cvcSession' });
  // A malformed secret cannot be one we issued: unknown, without a vault round trip.
  if (!CVC_SESSION_SECRET_PATTERN.test(input.cvcSession)) throw new TesseraError('cvc_session_not_found', { param: 'cvcSession' });
  const target = { merchantId: key.merchantId, mode: key.mode, token };
  return deps.vault.attachCvv(
    { ...target, cvv: String(input.cvv), cvvIsInteger: typeof input.cvv === 'number', cvcSession: input.cvcSession },
    ctx,
  );
}
