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
  BODY_LIMIT_BYTES: { text: 'request body limit (`413` above it)' },
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
};
