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
  ADMIN_PORT: {
    text: 'when set, the dashboard and admin API are served only on `ADMIN_BIND:ADMIN_PORT` (e.g. an internal address), not on `PORT`',
  },
  ADMIN_BIND: { text: 'bind address of the `ADMIN_PORT` listener' },
  FORM_SESSION_TTL_SECONDS: {
    text: 'how long a hosted payment page (form session) can be used; its record stays readable 24 h longer (status `expired`)',
  },
  CVC_SESSION_TTL_SECONDS: {
    text: 'how long a CVC session (`POST /v1/token/{token}/cvc-sessions`, the single-use grant `tessera.cvcField` needs) can be used; at most 3600',
  },
  ADMIN_SESSION_IDLE_SECONDS: { text: 'a dashboard session ends after 15 idle minutes (PCI DSS 8.2.8)' },
  ADMIN_SESSION_MAX_SECONDS: { text: 'a dashboard session ends at most 8 hours after login' },
  ADMIN_LOGIN_WINDOW_SECONDS: { text: 'the sliding window of the sign-in lockout counts below' },
  ADMIN_LOGIN_MAX_PER_IP: { text: 'sign-in attempts per client address per window, whatever the account (spraying)' },
  ADMIN_LOGIN_MAX_PER_ACCOUNT: {
    default: '`10` (at most 10)',
    text: 'sign-in lockout (PCI DSS 8.3.4): failed sign-ins per account in the window before it is locked for `ADMIN_LOGIN_LOCKOUT_SECONDS`; `429` with `Retry-After` ([SECURITY.md](SECURITY.md#dashboard-sign-in))',
  },
  ADMIN_LOGIN_MAX_PER_SOURCE: {
    text: 'failed sign-ins per source (address or trusted browser) for one account in the window before it is locked',
  },
  ADMIN_LOGIN_LOCKOUT_SECONDS: { default: '`1800` (at least 1800 in production)', text: 'how long a locked account stays locked' },
  ADMIN_MFA_REQUIRED: {
    default: '`true` in production, else `false`',
    text: 'every operator needs a second factor (TOTP); the first sign-in sets it up. Cannot be `false` in production',
  },
  ADMIN_TRUSTED_DEVICE_DAYS: {
    text: 'a browser that signed in with the second factor is exempt from the account lockout this long (never from the password and the code)',
  },
  ADMIN_AUDIT_MAX_ENTRIES: {
    alsoUsedBy: 'keys CLI',
    text: 'the audit log keeps this many newest entries (overall and per merchant)',
  },
  DETOKENIZATION_AUDIT_MAX_ENTRIES: {
    text: 'entries kept in the detokenization audit stream (`GET /admin/v1/detokenizations`)',
  },
  REQUEST_LOG_MAX_ENTRIES: {
    text: "entries kept in each merchant's request log (`GET /admin/v1/requests`, the dashboard's Requests page; trimmed approximately); `0` turns the log off",
  },
  REQUEST_LOG_MAX_AGE_SECONDS: {
    text: "the request log keeps entries this long (default 7 days); a merchant's log with nothing newer disappears",
  },
  REQUEST_LOG_BUFFER_ENTRIES: {
    text: 'request log entries a gateway process holds while Redis writes lag behind; beyond it entries are dropped (`tessera_request_log_dropped_total{reason="buffer_full"}`), never the request delayed',
  },
  TESSERA_DEV_ADMIN_EMAIL: { text: 'outside production, the e-mail of the development dashboard operator' },
  TESSERA_DEV_ADMIN_PASSWORD: {
    default: 'unset (`npm start` sets it)',
    text: 'outside production, a dashboard operator for every merchant with this password (refused in production)',
  },
};
