import type { WebhookDeliveryAnswer, WebhookDeliveryCall } from '@tessera/protos';
import type { PspCancellation } from '../egress/pspEgress';
import { postToMerchant, type MerchantPostDeps } from './merchantPost';

/** A receiver's answer is read up to this much and dropped: only its status counts. */
export const WEBHOOK_RESPONSE_READ_BYTES = 4096;

export type WebhookDeliveryDeps = MerchantPostDeps;

/**
 * One webhook delivery for the gateway's dispatcher (docs/webhooks.md, "Delivery, retries and
 * ordering"), under the rules of every POST to a merchant's server (app/merchantPost.ts). The
 * answer is bounded: a few KiB of the receiver's body are read and dropped, whatever it sends, so a
 * receiver cannot make the proxy buffer much. Deliveries are frequent and a receiver's outage is
 * the merchant's: logged at debug and info.
 */
export async function deliverWebhook(
  deps: WebhookDeliveryDeps,
  input: WebhookDeliveryCall,
  ctx: { requestId?: string; cancellation?: PspCancellation } = {},
): Promise<WebhookDeliveryAnswer> {
  const res = await postToMerchant(
    deps,
    input,
    {
      what: 'webhook delivery',
      maxResponseBytes: WEBHOOK_RESPONSE_READ_BYTES,
      truncateResponse: true,
      successLevel: 'debug',
      failureLevel: 'info',
    },
    ctx,
  );
  return { status: res.status, latencyMs: res.pspMs };
}
