import type { ConfigDocs } from '@tessera/common';

/** docs/configuration.md's text for the inbound service's own variables (shared ones: @tessera/common's sharedConfigDocs). */
export const inboundConfigDocs: ConfigDocs = {
  INBOUND_PORT: {
    text: "HTTP port of the inbound routes ([proxies.md](proxies.md#inbound-routes)): every path and host on it is a merchant's route, except `/healthz` and `/readyz`",
  },
  INBOUND_BIND: { text: 'HTTP bind address (`0.0.0.0` in containers)' },
  INBOUND_UPSTREAM_TIMEOUT_MS: {
    text: "how long the proxy waits for an upstream's answer to begin, and the longest silence within its body (capped by the proxy's `PSP_TIMEOUT_MS`); past it `504 psp_timeout`",
  },
  INBOUND_MAX_BODY_BYTES: { text: 'largest inbound request body; larger: `413 body_too_large`, nothing forwarded' },
  INBOUND_ROUTE_CACHE_MS: {
    text: 'how long a replica keeps the route index and the routes it read from Redis: a route applied, changed or deleted takes effect within this. `0`: read on every request',
  },
  INBOUND_CARDS_PER_ROUTE_PER_MINUTE: {
    text: 'card-testing ceiling: requests carrying a card per inbound route per minute (all senders); above it `429 rate_limited` with `Retry-After`. `0` disables',
  },
  INBOUND_CARDS_PER_IP_PER_MINUTE: {
    text: 'card-testing limit: requests carrying a card per client IP (IPv6: per /64) per minute, all routes together; above it `429 rate_limited`. `0` disables',
  },
  INBOUND_DISTINCT_CARDS_PER_IP_PER_HOUR: {
    text: 'different cards one client IP (IPv6: per /64) may send through inbound routes per hour; the same card again always passes. Counted as keyed hashes, never stored. `0` disables',
  },
  INBOUND_CARD_FINGERPRINT_KEY: {
    default: 'generated in development',
    text: 'secret (≥ 32 characters) keying the card fingerprints of the distinct-cards limit; every inbound replica must share it. Required in production',
  },
};
