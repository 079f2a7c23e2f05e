import type { CompletionCall, CompletionCallAnswer } from '@tessera/protos';
import type { PspCancellation } from '../egress/pspEgress';
import { postToMerchant, type MerchantPostDeps } from './merchantPost';

export interface CompletionDeps extends MerchantPostDeps {
  /** MERCHANT_CALL_MAX_RESPONSE_BYTES: a completion endpoint answers a line of JSON; more fails the call. */
  maxResponseBytes: number;
}

/**
 * One call to a merchant's completion endpoint for the hosted payment page (docs/api.md, "The
 * completion call"), under the rules of every POST to a merchant's server (app/merchantPost.ts).
 * Its answer is the merchant's verdict, so it comes back whole, bounded.
 */
export async function callCompletion(
  deps: CompletionDeps,
  input: CompletionCall,
  ctx: { requestId?: string; cancellation?: PspCancellation } = {},
): Promise<CompletionCallAnswer> {
  const res = await postToMerchant(deps, input, { what: 'completion call', maxResponseBytes: deps.maxResponseBytes }, ctx);
  return { status: res.status, body: res.body };
}
