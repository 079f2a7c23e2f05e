import type { ConfigDocs } from '@tessera/common';

/** docs/configuration.md's text for the gateway's own variables (shared ones: @tessera/common's sharedConfigDocs). */
export const gatewayConfigDocs: ConfigDocs = {
  PORT: { text: 'HTTP port' },
  HOST: { text: 'HTTP bind address (`0.0.0.0` in containers)' },
  PROXY_TIMEOUT_MS: {
    text: "deadline of a proxy call; must exceed the proxy's connect + vault + PSP timeouts (the proxy logs a warning when a call arrives with less)",
  },
  TESSERA_DEV_API_KEY: {
    default: 'unset (`npm start` sets it)',
    text: 'outside production, registers this `tsk_test_…` key for merchant `dev`',
  },
  BODY_LIMIT_BYTES: { text: 'request body limit (`413` above it), for `/v1` and for requests through the forward proxy' },
  FORWARD_PROXY_PORT: {
    default: 'unset (`npm start` sets `8084`)',
    text: 'port of the forward proxy for outbound routes, on `HOST`: an HTTP CONNECT proxy taking a secret key as the proxy password (`HTTPS_PROXY=http://x:tsk_…@host:port`, see [proxies](proxies.md#forward-proxy-outbound-routes)); unset: not served',
  },
  IDEMPOTENCY_TTL_SECONDS: { text: "how long an `Idempotency-Key`'s first answer is replayed" },
  IDEMPOTENCY_MAX_STORED_BYTES: {
    text: 'largest answer (body and header bytes) kept for replay; a larger one reaches the caller unchanged, only its status is kept and a retry gets `409 idempotent_replay_unavailable`. Payment answers are a few KB; 64 KiB still keeps a 3-D Secure page',
  },
  IDEMPOTENCY_MAX_BYTES_PER_MERCHANT: {
    text: 'bytes of idempotency records one merchant may hold per mode over `IDEMPOTENCY_TTL_SECONDS` (about 100,000 typical answers); beyond it new keys get `429 idempotency_quota_exceeded`. `0`: no limit',
  },
  IDEMPOTENCY_REDIS_URL: {
    default: '`REDIS_URL`',
    text: "a Redis of its own for idempotency records, so they can never fill the card store's memory (see [Running in production](operations.md#running-in-production)); `REDIS_TLS_CA_FILE` applies; never a Cluster",
  },
  IDEMPOTENCY_WRITE_ACK: {
    default: '`none`',
    text: '`aof` or `replica:N[:timeoutMs]`, as `VAULT_WRITE_ACK` for cards: an `Idempotency-Key` claim is acted on, and a stored answer relied on, only once fsynced / on N replicas of the Redis holding them. An unacknowledged claim answers `503 service_unavailable` without contacting the vault or the PSP and leaves the key free (see [failure modes](failure-modes.md))',
  },
  RATE_LIMIT_PER_KEY_PER_SECOND: {
    text: 'requests per API key per one-second window, counted across all gateways in Redis; above it `429 rate_limited` with `Retry-After`. `0` disables',
  },
  GATEWAY_WORKERS: {
    text: 'processes serving the public port (`node:cluster`), sharing keys and counters through Redis. See [PERFORMANCE.md](PERFORMANCE.md)',
  },
  FORM_SESSION_TTL_SECONDS: {
    text: 'how long a hosted payment page (form session) can be used; its record stays readable 24 h longer (status `expired`)',
  },
  CVC_SESSION_TTL_SECONDS: {
    text: 'how long a CVC session (`POST /v1/token/{token}/cvc-sessions`, the single-use grant `tessera.cvcField` needs) can be used; at most 3600',
  },
  EVENT_RETENTION_DAYS: {
    text: 'days each event is kept and listed by `GET /v1/events` (docs/webhooks.md); 1 to 365',
  },
  DETOKENIZATION_AUDIT_MAX_ENTRIES: {
    text: 'entries kept in the detokenization audit stream (`GET /admin/v1/detokenizations`)',
  },
  REQUEST_LOG_BUFFER_ENTRIES: {
    text: 'request log entries a gateway process holds while Redis writes lag behind; beyond it entries are dropped (`tessera_request_log_dropped_total{reason="buffer_full"}`), never the request delayed',
  },
  WEBHOOK_DELIVERY: {
    text: '`on`: this gateway process delivers webhooks (one dispatcher per process or worker; a lease per endpoint keeps replicas apart). `off`: it delivers none, e.g. when other replicas do',
  },
  WEBHOOK_RETRY_WINDOW_SECONDS: {
    text: 'how long a failing delivery is retried before it is given up (`gave_up` in the delivery log); 3 days',
  },
  WEBHOOK_BACKOFF_BASE_MS: {
    text: 'the wait before retry n is a random time below `min(WEBHOOK_BACKOFF_MAX_MS, WEBHOOK_BACKOFF_BASE_MS * 2^(n-1))` (exponential backoff with full jitter)',
  },
  WEBHOOK_BACKOFF_MAX_MS: { text: 'the largest backoff ceiling (see `WEBHOOK_BACKOFF_BASE_MS`)' },
  WEBHOOK_TIMEOUT_MS: {
    text: "one delivery attempt's deadline (connect, send, answer), capped by the proxy's `PSP_TIMEOUT_MS`; a receiver that does not answer in time is a failed attempt and holds back no other endpoint",
  },
  WEBHOOK_ENDPOINT_CONCURRENCY: {
    text: 'deliveries in flight per endpoint; never two events of the same object at once, nor one before an earlier event of its object was delivered or given up',
  },
  WEBHOOK_DISABLE_AFTER_SECONDS: {
    default: '`WEBHOOK_RETRY_WINDOW_SECONDS`',
    text: "an endpoint that has had only failed attempts for this long is disabled, and a `webhook_endpoint.disabled` event goes to the merchant's other endpoints",
  },
  WEBHOOK_LEASE_MS: {
    text: "an endpoint's lease (renewed while served); also how long a stream entry a dispatcher read may stay unqueued before another takes it over. After a crash, deliveries resume within about this long",
  },
};
