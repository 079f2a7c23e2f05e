import { TesseraError } from '@tessera/common';
import { CVC_SESSION_SECRET_PATTERN, cvcSessionDigest, cvcSessionRefusal, type CvcSessionStore } from '@tessera/merchant-data';
import type { TokenOwner, TokenRecordView } from '../domain/card';
import { keyModeOf } from '../domain/tokenMode';
import { tokenRecordFor, type VaultCaller } from './callers';
import type { Vault } from './vault';

export interface CvcAttachDeps {
  vault: Pick<Vault, 'attachCvv'>;
  /** Where the merchants' CVC sessions live (the gateway opens them; `@tessera/merchant-data`). */
  grants: CvcSessionStore;
  now: () => Date;
}

export interface CvcAttach {
  owner: TokenOwner;
  token: string;
  cvv: { value: string; isInteger: boolean };
  /** The CVC session's secret (`cvcs_…`), or '' for none. */
  cvcSession: string;
}

/**
 * AttachCvv. Without a CVC session: the merchant's own server re-collected the CVC (the gateway's
 * POST /v1/token/{token}/cvc with a secret key). With one: a shopper's CVC-only field did, under the
 * grant the merchant's server opened for this token; the fields identity may attach only that way.
 *
 * The vault takes the grant itself (atomically, once) before the CVV is stored, so the process
 * facing the browser cannot attach a CVC without one, and gives it back when the CVC is refused,
 * so a mistyped CVC can be corrected under the same grant while two concurrent attaches still
 * cannot both succeed.
 */
export async function attachCvv(deps: CvcAttachDeps, caller: VaultCaller, request: CvcAttach): Promise<TokenRecordView> {
  const { owner, token, cvv, cvcSession } = request;
  if (cvcSession === '') {
    if (caller === 'fields') throw new TesseraError('cvc_session_required', { param: 'cvcSession' });
    return tokenRecordFor(caller, await deps.vault.attachCvv(owner, token, cvv));
  }
  const mode = keyModeOf(owner.mode);
  // A malformed secret cannot be one the gateway issued, nor can a grant name a mode no key has:
  // unknown, without a store round trip.
  if (!CVC_SESSION_SECRET_PATTERN.test(cvcSession) || mode === undefined) {
    throw new TesseraError('cvc_session_not_found', { param: 'cvcSession' });
  }
  const digest = cvcSessionDigest(cvcSession);
  const claim = await deps.grants.claim(digest, { merchantId: owner.merchantId, mode, token }, deps.now());
  if (claim !== 'claimed') throw cvcSessionRefusal(claim);
  try {
    return tokenRecordFor(caller, await deps.vault.attachCvv(owner, token, cvv));
  } catch (err) {
    // Only a refusal (4xx: cvv_invalid, token_not_found, ...) proves nothing was written. A 5xx
    // (the card store's deadline, say) may come from a write that landed: the grant stays used,
    // as handing it back would let a second CVC be attached under it.
    if (err instanceof TesseraError && err.status < 500) await deps.grants.release(digest).catch(() => undefined);
    throw err;
  }
}
