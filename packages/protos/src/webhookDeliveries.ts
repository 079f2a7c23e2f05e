import type { ProxyClient } from './generated/tessera/proxy/v1/Proxy';
import type { DeliverWebhookRequest } from './generated/tessera/proxy/v1/DeliverWebhookRequest';
import type { DeliverWebhookResponse__Output } from './generated/tessera/proxy/v1/DeliverWebhookResponse';
import { webhookDeliveryToWire, type WebhookDeliveryAnswer, type WebhookDeliveryCall } from './contract';
import { call } from './edge';

/**
 * The proxy's DeliverWebhook as the gateway's dispatcher uses it. The gRPC deadline is the
 * exchange's own plus `marginMs`, so the proxy's timeout, not the channel's, normally ends a slow
 * receiver (and the answer says `psp_timeout` rather than a broken call).
 */
export interface WebhookDeliveries {
  deliverWebhook(request: WebhookDeliveryCall, ctx: { requestId: string }): Promise<WebhookDeliveryAnswer>;
}

export function webhookDeliveries(client: ProxyClient, marginMs = 1000): WebhookDeliveries {
  return {
    async deliverWebhook(request, ctx) {
      const answer = await call<DeliverWebhookRequest, DeliverWebhookResponse__Output>(
        client,
        client.DeliverWebhook,
        webhookDeliveryToWire(request),
        { timeoutMs: request.timeoutMs + marginMs, requestId: ctx.requestId },
      );
      return { status: answer.status, latencyMs: answer.latencyMs };
    },
  };
}
