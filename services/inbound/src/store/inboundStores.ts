import type { Logger } from '@tessera/common';
import { connectLogged, createServiceRedis, RedisDistinctCardCounter, RedisRateLimitCounter } from '@tessera/edge';
import type { InboundConfig } from '../config';
import { CachedRouteReader } from './inboundRoutes';

/** What the inbound service keeps in Redis: it reads the routes, and counts its card-testing limits. */
export interface InboundStores {
  routes: CachedRouteReader;
  rateLimits: RedisRateLimitCounter;
  distinctCards: RedisDistinctCardCounter;
  ping(): Promise<unknown>;
}

/** Connects Redis; one that is down at start does not stop the start (/readyz reports it, requests answer 503). */
export async function connectInboundStores(
  config: InboundConfig,
  logger: Logger,
): Promise<{ stores: InboundStores; close(): Promise<void> }> {
  const redis = createServiceRedis(config);
  const stores: InboundStores = {
    routes: new CachedRouteReader(redis, config.INBOUND_ROUTE_CACHE_MS),
    rateLimits: new RedisRateLimitCounter(redis),
    distinctCards: new RedisDistinctCardCounter(redis),
    ping: () => redis.ping(),
  };
  await connectLogged(redis, logger, 'redis', 'inbound routes answer 503');
  return {
    stores,
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
