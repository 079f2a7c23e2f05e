import type { Redis } from 'ioredis';
import { redisUnavailable } from '@tessera/common/redis';
import { inboundAddressOf, type InboundAddress, type InboundOwner } from '../domain/inboundAddress';
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

/** An inbound path or host another route (of any merchant) holds: paths and hosts are unique across the deployment. */
export class RouteAddressTakenError extends Error {
  constructor(readonly address: InboundAddress) {
    super(`${address.startsWith('host:') ? 'host' : 'path'} ${address.slice(5)} is already served by another inbound route`);
  }
}

/**
 * The deployment's inbound addresses (docs/proxies.md): one hash, field `path:/checkout` or
 * `host:pay.shop.example`, value the owner's `{"merchantId","routeId"}`. Written by put and delete
 * (the admin service), read by the inbound service, which cannot list every merchant's routes.
 * Its own slot: in a Redis Cluster a script may not touch it and a merchant's routes together, so a
 * put claims first, writes the route, then releases what the route no longer holds; each step is a
 * compare-and-set on the index alone, and a claim left by a put that died half-way is taken over
 * once its owner's route is found not to hold it.
 */
export const INBOUND_INDEX_KEY = 'tessera:routes:inbound-index';

const ownerJson = (owner: InboundOwner): string => JSON.stringify({ merchantId: owner.merchantId, routeId: owner.routeId });

/** Parses an index value; undefined for anything else (the reader then treats the address as unheld). */
export function parseInboundOwner(raw: string | null | undefined): InboundOwner | undefined {
  if (raw === null || raw === undefined) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<InboundOwner>;
    return typeof value.merchantId === 'string' && typeof value.routeId === 'string'
      ? { merchantId: value.merchantId, routeId: value.routeId }
      : undefined;
  } catch {
    return undefined;
  }
}

// Claim ARGV[1] for ARGV[2] when it is free, already ours, or still held by ARGV[3] (a stale claim the caller checked).
const CLAIM_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (not current) or current == ARGV[2] or (ARGV[3] ~= '' and current == ARGV[3]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
`;

// Release ARGV[1] only if ARGV[2] still holds it.
const RELEASE_SCRIPT = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) return 1 end
return 0
`;

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
    const owner = { merchantId, routeId: route.id };
    const address = inboundAddressOf(route);
    if (address !== undefined) await this.claim(address, owner);
    let result: [number, string | null];
    try {
      result = (await this.redis.eval(PUT_SCRIPT, 1, routesKey(merchantId), route.id, JSON.stringify(stored), MAX_ROUTES_PER_MERCHANT)) as [
        number,
        string | null,
      ];
    } catch (err) {
      throw redisUnavailable(err);
    }
    const previous = result[1] ? parseStored(result[1]) : undefined;
    if (result[0] === 0) {
      // Only a new id is refused, so the claim just made was this put's own.
      if (address !== undefined) await this.release(address, owner);
      throw new RouteLimitError(`a merchant has at most ${MAX_ROUTES_PER_MERCHANT} routes`);
    }
    const before = previous === undefined ? undefined : inboundAddressOf(previous.route);
    if (before !== undefined && before !== address) await this.release(before, owner);
    return { stored, previous };
  }

  async delete(merchantId: string, routeId: string): Promise<boolean> {
    const existing = await this.get(merchantId, routeId);
    let deleted: boolean;
    try {
      deleted = (await this.redis.hdel(routesKey(merchantId), routeId)) > 0;
    } catch (err) {
      throw redisUnavailable(err);
    }
    const address = existing === undefined ? undefined : inboundAddressOf(existing.route);
    if (address !== undefined) await this.release(address, { merchantId, routeId });
    return deleted;
  }

  /** Who holds an inbound address; undefined when no one does. */
  async ownerOf(address: InboundAddress): Promise<InboundOwner | undefined> {
    try {
      return parseInboundOwner(await this.redis.hget(INBOUND_INDEX_KEY, address));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }

  /**
   * Takes `address` for `owner`, or RouteAddressTakenError when another route holds it. A holder
   * whose route is gone or serves another address now (a put or delete that died half-way) is
   * taken over, compared and set in one step so two claims cannot both win.
   */
  private async claim(address: InboundAddress, owner: InboundOwner): Promise<void> {
    let raw: string | null;
    try {
      raw = await this.redis.hget(INBOUND_INDEX_KEY, address);
    } catch (err) {
      throw redisUnavailable(err);
    }
    const holder = parseInboundOwner(raw);
    let stale = '';
    if (raw !== null && (holder === undefined || holder.merchantId !== owner.merchantId || holder.routeId !== owner.routeId)) {
      const held = holder === undefined ? undefined : await this.get(holder.merchantId, holder.routeId);
      if (held !== undefined && inboundAddressOf(held.route) === address) throw new RouteAddressTakenError(address);
      stale = raw;
    }
    let claimed: number;
    try {
      claimed = (await this.redis.eval(CLAIM_SCRIPT, 1, INBOUND_INDEX_KEY, address, ownerJson(owner), stale)) as number;
    } catch (err) {
      throw redisUnavailable(err);
    }
    if (claimed !== 1) throw new RouteAddressTakenError(address);
  }

  private async release(address: InboundAddress, owner: InboundOwner): Promise<void> {
    try {
      await this.redis.eval(RELEASE_SCRIPT, 1, INBOUND_INDEX_KEY, address, ownerJson(owner));
    } catch (err) {
      throw redisUnavailable(err);
    }
  }
}
