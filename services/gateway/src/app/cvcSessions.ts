import type { ApiKeyRecord } from '@tessera/merchant-data';
import { cvcSessionDigest, newCvcSessionSecret, type CvcSessionRecord } from '@tessera/merchant-data';
import type { CvcSessionStore } from '@tessera/merchant-data';
import type { VaultApi } from './ports';

/**
 * Re-collecting a CVC in a browser (tessera.cvcField): a merchant's server opens a CVC session
 * for one token with its secret key, here; the CVC-only field attaches one CVC under it with the
 * publishable key on the fields service, and the vault claims the grant.
 */
export interface CvcSessionDeps {
  sessions: CvcSessionStore;
  vault: Pick<VaultApi, 'getToken'>;
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
