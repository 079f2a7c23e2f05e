import { TesseraError } from '@tessera/common';
import type { TokenRecord__Output } from '@tessera/protos';
import { CVC_SESSION_SECRET_PATTERN, type ApiKeyRecord } from '@tessera/merchant-data';
import type { CallContext, FieldsVault } from './ports';

type TokenOwner = Pick<ApiKeyRecord, 'merchantId' | 'mode'>;

/**
 * POST /v1/browser/tokens/{token}/cvc: the CVC-only field (tessera.cvcField) attaches one CVC
 * under the CVC session a merchant's server opened on the gateway. The vault claims the grant
 * itself, atomically and once, and gives it back when it refuses the CVC: the grant and the write
 * it allows are decided in one place, and this service's identity cannot attach a CVC without one.
 * Here only what needs no store: a missing grant, or a secret that cannot be one we issued.
 */
export async function attachCvcUnderSession(
  vault: Pick<FieldsVault, 'attachCvv'>,
  key: TokenOwner,
  token: string,
  input: { cvv: number | string; cvcSession: string | undefined },
  ctx: CallContext,
): Promise<TokenRecord__Output> {
  if (input.cvcSession === undefined) throw new TesseraError('cvc_session_required', { param: 'cvcSession' });
  if (!CVC_SESSION_SECRET_PATTERN.test(input.cvcSession)) throw new TesseraError('cvc_session_not_found', { param: 'cvcSession' });
  return vault.attachCvv(
    {
      merchantId: key.merchantId,
      mode: key.mode,
      token,
      cvv: String(input.cvv),
      cvvIsInteger: typeof input.cvv === 'number',
      cvcSession: input.cvcSession,
    },
    ctx,
  );
}
