import type { Logger } from '@tessera/common';
import type { InboundOwner } from '@tessera/routes';
import {
  cardFingerprint,
  cardFingerprintKey,
  clientNetworkOf,
  failOpen,
  isOverLimit,
  rateLimitRefusal,
  type DistinctCardCounter,
  type FailOpen,
  type RateLimitCounter,
} from '@tessera/edge';
import type { CardTestingGuard } from './ports';

/**
 * Card-testing limits on inbound routes (docs/proxies.md): an inbound route is as public as the
 * card fields, so a fraudster can post stolen numbers through it one after another. The fields'
 * counters (@tessera/edge) with buckets of their own: requests with a card per route and per client
 * network per minute, distinct cards per client network per hour. Unlike the fields there is no
 * proof of work (no script of ours runs in the sender), so a route past its rate is refused: the
 * limit is a ceiling set well above a shop's checkouts. They fail open, as every limit does: a
 * limiter outage must not stop checkouts.
 */

export interface CardTestingLimits {
  /** Requests with a card per route per minute; 0 disables. */
  INBOUND_CARDS_PER_ROUTE_PER_MINUTE: number;
  /** Requests with a card per client IP (IPv6: per /64) per minute; 0 disables. */
  INBOUND_CARDS_PER_IP_PER_MINUTE: number;
  /** Distinct cards per client IP (IPv6: per /64) per hour; 0 disables. */
  INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** Counter names, under the rate limits' prefix (tessera:ratelimit:inbound:*, the inbound Redis user's only writable keys). */
export const inboundRouteBucket = (owner: InboundOwner): string => `inbound:route:${owner.merchantId}:${owner.routeId}`;
export const inboundIpBucket = (clientIp: string | undefined): string => `inbound:ip:${clientNetworkOf(clientIp)}`;
export const inboundCardsBucket = (clientIp: string | undefined): string => `inbound:cards:${clientNetworkOf(clientIp)}`;

export function cardTestingGuard(deps: {
  counter: RateLimitCounter;
  cards: DistinctCardCounter;
  limits: CardTestingLimits;
  /** The server secret the card fingerprints are keyed from (API_KEY_PEPPER, as the fields'). */
  secret: string;
  logger: Logger;
  onRefused?: (reason: 'route' | 'ip' | 'distinct_cards') => void;
}): CardTestingGuard {
  const ask: FailOpen = failOpen(deps.logger, 'inbound limit store unavailable: card-testing limits are not enforced (failing open)');
  const fingerprintKey = cardFingerprintKey(deps.secret);
  const { limits } = deps;
  return {
    async admitRequest(owner, clientIp, requestId) {
      const [byRoute, byIp] = await Promise.all([
        limits.INBOUND_CARDS_PER_ROUTE_PER_MINUTE > 0
          ? ask(() => deps.counter.hit(inboundRouteBucket(owner), MINUTE_MS), requestId)
          : undefined,
        limits.INBOUND_CARDS_PER_IP_PER_MINUTE > 0
          ? ask(() => deps.counter.hit(inboundIpBucket(clientIp), MINUTE_MS), requestId)
          : undefined,
      ]);
      if (byIp !== undefined && isOverLimit(byIp.count, limits.INBOUND_CARDS_PER_IP_PER_MINUTE)) {
        deps.onRefused?.('ip');
        throw rateLimitRefusal('Too many card submissions from this network.', byIp.resetInMs);
      }
      if (byRoute !== undefined && isOverLimit(byRoute.count, limits.INBOUND_CARDS_PER_ROUTE_PER_MINUTE)) {
        deps.onRefused?.('route');
        throw rateLimitRefusal('Too many card submissions on this route.', byRoute.resetInMs);
      }
    },
    async admitCard(number, clientIp, requestId) {
      const limit = limits.INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR;
      if (limit <= 0) return;
      const fingerprint = cardFingerprint(fingerprintKey, number);
      const admission = await ask(() => deps.cards.admit(inboundCardsBucket(clientIp), fingerprint, limit, HOUR_MS), requestId);
      if (admission !== undefined && !admission.admitted) {
        deps.onRefused?.('distinct_cards');
        throw rateLimitRefusal('Too many different cards from this network.', admission.resetInMs);
      }
    },
  };
}
