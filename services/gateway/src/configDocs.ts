import type { ConfigDocs } from '@tessera/common';

/** docs/configuration.md's text for the gateway's own variables (shared ones: @tessera/common's sharedConfigDocs). */
export const gatewayConfigDocs: ConfigDocs = {
  PORT: { text: 'HTTP port' },
  HOST: { text: 'HTTP bind address (`0.0.0.0` in containers)' },
  PROXY_TIMEOUT_MS: {
    text: "deadline of a proxy call; must exceed the proxy's connect + vault + PSP timeouts (the proxy logs a warning when a call arrives with less)",
  },
  READY_TIMEOUT_MS: { text: 'deadline of each `/readyz` check' },
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
  RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: {
    text: '`401`s per client IP (IPv6: per /64) per minute; after that every request from it, even with a valid key, gets `429` until the minute is over. `0` disables',
  },
  RATE_LIMIT_STORE_TIMEOUT_MS: {
    text: "how long an API request waits for its rate-limit counters in Redis before going through as if under those limits (they fail open; the card-testing counters of browser tokenization wait for the command timeout, so that a gateway slowed by an attack still counts). Keep it below `REDIS_COMMAND_TIMEOUT_MS`: a client address's counters live in its own slot, so with that Cluster master down its requests otherwise wait the full command timeout although their key answered at once. A counter that answers within it is always enforced",
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
  FIELDS_PORT: {
    default: 'unset (`npm start`: `8082`)',
    text: 'when set, the hosted card fields and `tessera.js` are served on their own listener ([browser.md](browser.md))',
  },
  FIELDS_BIND: { text: 'bind address of the `FIELDS_PORT` listener' },
  FIELDS_ORIGIN: {
    default: '`http://127.0.0.1:<FIELDS_PORT>` outside production',
    text: 'the public origin browsers reach the fields at, and the only origin the browser route answers CORS for. Required (https) in production with `FIELDS_PORT`',
  },
  API_ORIGIN: {
    default: '`http://127.0.0.1:<PORT>` outside production',
    text: "the public origin browsers reach the API at, the fields' only `connect-src`. Required (https) in production with `FIELDS_PORT`",
  },
  BROWSER_TOKENS_PER_KEY_PER_MINUTE: {
    text: "card-testing threshold of `POST /v1/browser/tokens` and the hosted page's `POST /pay/{id}`: tokenizations per publishable key (hosted page: per secret key that opened the form session) per minute past which every card needs a solved proof-of-work challenge (`429 challenge_required` without one); nobody is refused for the key's volume alone. `0` disables ([browser.md](browser.md#card-testing))",
  },
  BROWSER_CHALLENGE_BASE_NUMBER: {
    text: "a challenge's `maxnumber` (expected work: half as many SHA-256 hashes) at the threshold; times the key's recent volume in thresholds, doubled per card-testing refusal of the asking address in the hour. At most `BROWSER_CHALLENGE_MAX_NUMBER`",
  },
  BROWSER_CHALLENGE_MAX_NUMBER: {
    text: "the ceiling of a challenge's `maxnumber`, so a shopper's solve stays bounded however hard the attack",
  },
  BROWSER_CHALLENGE_TTL_SECONDS: { text: 'how long a challenge can be solved and spent (each solution once)' },
  BROWSER_ATTACK_COOLDOWN_SECONDS: {
    text: 'once a key reaches its threshold it counts as under attack this long: challenges stay on, the dashboard shows a banner',
  },
  BROWSER_TOKEN_TTL_UNDER_ATTACK_SECONDS: {
    text: "a provisional token made while its key is under attack is deleted this long after it was made unless retained (when shorter than the vault's `BROWSER_TOKEN_TTL_SECONDS`)",
  },
  BROWSER_CHALLENGE_HMAC_KEY: {
    default: 'derived from `API_KEY_PEPPER`',
    text: 'the HMAC key the challenges are signed with (at least 32 characters); every gateway replica must share it',
  },
  BROWSER_TOKENS_PER_IP_PER_MINUTE: {
    text: "card-testing limit on `POST /v1/browser/tokens` and the hosted page's `POST /pay/{id}`, together: tokenizations per shopper IP (IPv6: per /64) per minute; above it `429 rate_limited` with `Retry-After`. `0` disables",
  },
  BROWSER_DISTINCT_CARDS_PER_IP_PER_HOUR: {
    text: 'different cards one shopper IP (IPv6: per /64) may tokenize in the browser (card fields and hosted page together) per hour; the same card again always passes. Cards are counted as keyed hashes, never stored. `0` disables',
  },
  DETOKENIZATION_AUDIT_MAX_ENTRIES: {
    text: 'entries kept in the detokenization audit stream (`GET /admin/v1/detokenizations`)',
  },
  REQUEST_LOG_BUFFER_ENTRIES: {
    text: 'request log entries a gateway process holds while Redis writes lag behind; beyond it entries are dropped (`tessera_request_log_dropped_total{reason="buffer_full"}`), never the request delayed',
  },
};
