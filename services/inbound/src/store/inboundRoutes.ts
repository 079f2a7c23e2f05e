import type { Redis } from 'ioredis';
import { redisUnavailable } from '@tessera/common/redis';
import {
  INBOUND_INDEX_KEY,
  parseInboundOwner,
  RedisRouteStore,
  type InboundAddress,
  type InboundOwner,
  type StoredRoute,
} from '@tessera/routes';
import type { InboundRouteReader } from '../app/ports';

/**
 * The route index and the merchants' routes as this service reads them (its Redis user may only
 * read tessera:routes:*). Each replica keeps what it read for `cacheMs` (INBOUND_ROUTE_CACHE_MS), so
 * a busy route costs Redis nothing per request and a change applies within that time. The index is
 * read whole (one HGETALL, its size bounded by the deployment's routes), so requests to paths no
 * route holds cost nothing either and cannot grow the cache.
 */
export class CachedRouteReader implements InboundRouteReader {
  private readonly store: RedisRouteStore;
  private index: { at: number; owners: Map<string, InboundOwner> } | undefined;
  private loading: Promise<Map<string, InboundOwner>> | undefined;
  private readonly routes = new Map<string, { at: number; route: StoredRoute | undefined }>();

  constructor(
    private readonly redis: Redis,
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.store = new RedisRouteStore(redis);
  }

  async ownerOf(address: InboundAddress): Promise<InboundOwner | undefined> {
    return (await this.owners()).get(address);
  }

  async route(owner: InboundOwner): Promise<StoredRoute | undefined> {
    const key = JSON.stringify([owner.merchantId, owner.routeId]);
    const cached = this.routes.get(key);
    if (cached !== undefined && this.now() - cached.at < this.cacheMs) return cached.route;
    const route = await this.store.get(owner.merchantId, owner.routeId);
    this.routes.set(key, { at: this.now(), route });
    return route;
  }

  private async owners(): Promise<Map<string, InboundOwner>> {
    if (this.index !== undefined && this.now() - this.index.at < this.cacheMs) return this.index.owners;
    // One read for every request that finds the cache stale at once.
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<Map<string, InboundOwner>> {
    let raw: Record<string, string>;
    try {
      raw = await this.redis.hgetall(INBOUND_INDEX_KEY);
    } catch (err) {
      throw redisUnavailable(err);
    }
    const owners = new Map<string, InboundOwner>();
    for (const [address, value] of Object.entries(raw)) {
      const owner = parseInboundOwner(value);
      if (owner !== undefined) owners.set(address, owner);
    }
    this.index = { at: this.now(), owners };
    // Routes no longer in the index are dropped with it: the cache holds at most the index's routes.
    const held = new Set([...owners.values()].map((o) => JSON.stringify([o.merchantId, o.routeId])));
    for (const key of this.routes.keys()) if (!held.has(key)) this.routes.delete(key);
    return owners;
  }
}
