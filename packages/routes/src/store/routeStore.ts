import type { Redis } from 'ioredis';
import { redisUnavailable } from '@tessera/common/redis';
import { parseRouteDocument, type RouteDocument } from '../domain/routeDocument';

/** A route as stored: the document, and when it was first applied and last changed. */
export interface StoredRoute {
  route: RouteDocument;
  createdAt: string;
  updatedAt: string;
}

/** What the services that run routes need: they read, never write. */
export interface RouteReader {
  list(merchantId: string): Promise<StoredRoute[]>;
  get(merchantId: string, routeId: string): Promise<StoredRoute | undefined>;
}

export interface RouteStore extends RouteReader {
  /** Creates or replaces; answers the stored route and what it replaced. */
  put(merchantId: string, route: RouteDocument, now: Date): Promise<{ stored: StoredRoute; previous: StoredRoute | undefined }>;
  /** True when there was one. */
  delete(merchantId: string, routeId: string): Promise<boolean>;
}

/** Routes per merchant, at most this many: a route is read on every proxied request. */
export const MAX_ROUTES_PER_MERCHANT = 100;

/**
 * Layout: one hash per merchant, `tessera:routes:{m:<merchantId>}:routes`, field = route id, value =
 * the StoredRoute JSON; in the merchant's slot, like its other data (merchant-data's domain/slots.ts).
 */
export const routesKey = (merchantId: string): string => `tessera:routes:{m:${merchantId}}:routes`;

function parseStored(raw: string): StoredRoute {
  const parsed = JSON.parse(raw) as StoredRoute;
  // Documents are checked again on the way out: a route written by an older schema fails loudly here, not in a proxy.
  return { route: parseRouteDocument(parsed.route), createdAt: parsed.createdAt, updatedAt: parsed.updatedAt };
}

// Create or replace in one step, with the count checked against the limit for new ids only.
const PUT_SCRIPT = `
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if not previous and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return {0, false} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {1, previous}
`;

export class RouteLimitError extends Error {}

export class RedisRouteStore implements RouteStore {
  constructor(private readonly redis: Redis) {}

  async list(merchantId: string): Promise<StoredRoute[]> {
    try {
      const all = await this.redis.hgetall(routesKey(merchantId));
      return Object.values(all)
        .map(parseStored)
        .sort((a, b) => a.route.id.localeCompare(b.route.id));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  async get(merchantId: string, routeId: string): Promise<StoredRoute | undefined> {
    let raw: string | null;
    try {
      raw = await this.redis.hget(routesKey(merchantId), routeId);
    } catch (err) {
      throw redisUnavailable(err);
    }
    return raw === null ? undefined : parseStored(raw);
  }

  async put(merchantId: string, route: RouteDocument, now: Date): Promise<{ stored: StoredRoute; previous: StoredRoute | undefined }> {
    const existing = await this.get(merchantId, route.id);
    const stored: StoredRoute = { route, createdAt: existing?.createdAt ?? now.toISOString(), updatedAt: now.toISOString() };
    let result: [number, string | null];
    try {
      result = (await this.redis.eval(PUT_SCRIPT, 1, routesKey(merchantId), route.id, JSON.stringify(stored), MAX_ROUTES_PER_MERCHANT)) as [
        number,
        string | null,
      ];
    } catch (err) {
      throw redisUnavailable(err);
    }
    if (result[0] === 0) throw new RouteLimitError(`a merchant has at most ${MAX_ROUTES_PER_MERCHANT} routes`);
    return { stored, previous: result[1] ? parseStored(result[1]) : undefined };
  }

  async delete(merchantId: string, routeId: string): Promise<boolean> {
    try {
      return (await this.redis.hdel(routesKey(merchantId), routeId)) > 0;
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
