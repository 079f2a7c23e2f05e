import { performance } from 'node:perf_hooks';
import { TesseraError, type Logger } from '@tessera/common';
import type { WebhookDeliveryAnswer, WebhookDeliveryCall } from '@tessera/protos';
import { logHostOf, parseMode, type DestinationPolicy } from '../domain/destinationPolicy';
import { filterRequestHeaders } from '../domain/headers';
import { preflightDestination, sendToPsp, type PspCancellation, type PspEgress } from '../egress/pspEgress';

/** A receiver's answer is read up to this much and dropped: only its status counts. */
export const WEBHOOK_RESPONSE_READ_BYTES = 4096;

export interface WebhookDeliveryDeps {
  policy: DestinationPolicy;
  egress: PspEgress;
  logger: Logger;
}

/**
 * One webhook delivery for the gateway's dispatcher (docs/webhooks.md, "Delivery, retries and
 * ordering"): the same destination rules as a PSP call (URL decision, then the egress pre-flight of
 * every address, pinned while the exchange runs), no vault, the signed body sent as it is. The
 * answer is bounded: a few KiB of the receiver's body are read and dropped, whatever it sends, so
 * a receiver cannot make the proxy buffer much; the deadline is the caller's, at most PSP_TIMEOUT_MS.
 * Logs carry the host, status and timings; never the path, headers or bodies.
 */
export async function deliverWebhook(
  deps: WebhookDeliveryDeps,
  input: WebhookDeliveryCall,
  ctx: { requestId?: string; cancellation?: PspCancellation } = {},
): Promise<WebhookDeliveryAnswer> {
  const started = performance.now();
  const logFields: Record<string, unknown> = { requestId: ctx.requestId, merchantId: input.merchantId };
  try {
    const url = deps.policy.checkUrl(input.url, parseMode(input.mode), []);
    logFields.host = url.logHost;
    const headers = [
      ...filterRequestHeaders(input.headers).filter((h) => h.name.toLowerCase() !== 'content-type'),
      { name: 'content-type', value: 'application/json' },
    ];
    const destination = await preflightDestination(deps.egress, url);
    const timeoutMs = input.timeoutMs > 0 ? Math.min(input.timeoutMs, deps.egress.timeoutMs) : deps.egress.timeoutMs;
    const res = await sendToPsp(deps.egress, {
      destination,
      method: 'POST',
      headers,
      body: input.body,
      timeoutMs,
      maxResponseBytes: WEBHOOK_RESPONSE_READ_BYTES,
      truncateResponse: true,
      ...(ctx.cancellation ? { cancellation: ctx.cancellation } : {}),
    });
    deps.logger.debug({ ...logFields, status: res.status, receiverMs: Math.round(res.pspMs) }, 'webhook delivered');
    return { status: res.status, latencyMs: res.pspMs };
  } catch (err) {
    const code = err instanceof TesseraError ? err.code : 'internal_error';
    if (code === 'psp_destination_forbidden' && logFields.host === undefined) logFields.host = logHostOf(input.url);
    const fields = { ...logFields, code, durationMs: Math.round(performance.now() - started) };
    if (code === 'internal_error') deps.logger.error({ ...fields, err }, 'webhook delivery failed');
    else deps.logger.info(fields, 'webhook delivery failed');
    throw err;
  }
}
