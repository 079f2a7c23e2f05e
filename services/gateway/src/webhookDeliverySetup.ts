import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Logger } from '@tessera/common';
import { RedisEventStore, RedisWebhookDeliveryStore, RedisWebhookEndpointStore } from '@tessera/merchant-data';
import type { GatewayConfig } from './config';
import type { WebhookSender } from './app/ports';
import { createWebhookDispatcher, type WebhookDispatcher } from './app/webhookDelivery';

/** The webhook dispatcher of this gateway process on its Redis, unless WEBHOOK_DELIVERY=off. */
export function startWebhookDelivery(deps: {
  config: GatewayConfig;
  logger: Logger;
  metrics: Registry;
  redis: Redis;
  sender: WebhookSender;
  pepper: string;
}): WebhookDispatcher | undefined {
  const { config } = deps;
  if (config.WEBHOOK_DELIVERY === 'off') return undefined;
  const windowSeconds = config.WEBHOOK_RETRY_WINDOW_SECONDS;
  const dispatcher = createWebhookDispatcher({
    deliveries: new RedisWebhookDeliveryStore(deps.redis),
    endpoints: new RedisWebhookEndpointStore(deps.redis),
    events: new RedisEventStore(deps.redis),
    sender: deps.sender,
    pepper: deps.pepper,
    logger: deps.logger.child({ component: 'webhooks' }),
    metrics: deps.metrics,
    settings: {
      retry: { baseMs: config.WEBHOOK_BACKOFF_BASE_MS, maxMs: config.WEBHOOK_BACKOFF_MAX_MS, windowMs: windowSeconds * 1000 },
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
      disableAfterMs: (config.WEBHOOK_DISABLE_AFTER_SECONDS ?? windowSeconds) * 1000,
      leaseMs: config.WEBHOOK_LEASE_MS,
    },
  });
  dispatcher.start();
  return dispatcher;
}
