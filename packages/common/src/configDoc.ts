import type { z } from 'zod';

/**
 * What docs/configuration.md says about one environment variable. The default is read from the
 * schema; `default` overrides it where the schema's own value would mislead (a path resolved on
 * this machine, a default that depends on NODE_ENV).
 */
export interface VariableDoc {
  text: string;
  default?: string;
  /** Readers of the variable that have no schema of their own here (the CLIs). */
  alsoUsedBy?: string;
}

export type ConfigDocs = Readonly<Record<string, VariableDoc>>;

export interface DocumentedSchema {
  service: string;
  schema: z.ZodType;
  docs: ConfigDocs;
}

/** Variables read by more than one service, described once. */
export const sharedConfigDocs: ConfigDocs = {
  NODE_ENV: {
    default: '`production` when unset',
    alsoUsedBy: 'CLIs',
    text: 'only `development` or `test` relax the production rules (real secrets, mTLS, a shared Redis); `npm start` sets `development`, and the CLIs beside it take it from `stack.json` in `.tessera/admin` (`npm run keys`) and `.tessera/vault`. Set `NODE_ENV=development` to run a service by hand against the development stack',
  },
  LOG_LEVEL: { text: 'pino level (`fatal` … `trace`, `silent`)' },
  EVENT_SWEEP_INTERVAL_SECONDS: {
    text: "how often a service's events sweeps run, once across its replicas (a lease in Redis): the fields service's `form_session.expired` (and the backstop of `form_session.completed`), the admin service's `api_key.expiring_soon`, the vault's `token.expiring_soon` and `cvv.expired_unused`. Each event is recorded once per object however often the sweep runs ([webhooks.md](webhooks.md#where-events-come-from))",
  },
  FIELDS_ORIGIN: {
    default: 'fields: `http://127.0.0.1:<FIELDS_PORT>` outside production; gateway, admin: unset',
    text: "the fields service's public origin ([browser.md](browser.md)), its own host, never the API's or the dashboard's. The fields service takes cards only from its pages (its browser routes answer no CORS); the gateway names it in a form session's page URL (`<FIELDS_ORIGIN>/pay/{id}`) and without it opens no form or CVC sessions; the admin service names it in the payment-page policy it recommends (dashboard and `npm run keys -- page-policy`, [browser.md](browser.md#saq-a-kit-your-payment-pages-scripts-and-headers)) and without it offers none. Required (https) in production by the fields service, https there for the gateway",
  },
  READY_TIMEOUT_MS: { text: 'deadline of each `/readyz` check' },
  API_KEY_PEPPER: {
    default: 'generated in development',
    alsoUsedBy: 'keys CLI',
    text: 'secret (≥ 32 characters) keying the HMAC of API keys: the gateway, the admin service (which makes keys) and the fields service (publishable keys) must share it',
  },
  API_KEY_PEPPERS: {
    alsoUsedBy: 'keys CLI',
    text: 'instead of `API_KEY_PEPPER`, to rotate it: `v1:<old>,v2:<new>`, newest last. New keys are hashed with the newest; a key found under an older pepper still works and is re-hashed under the newest on its next use. `npm run keys -- rehash-status` counts keys per version; drop an old pepper once it counts zero and `unrecorded` is zero',
  },
  TRUSTED_PROXIES: {
    text: 'CIDRs of load balancers whose `X-Forwarded-For` is believed (the client or shopper address of the rate and card-testing limits)',
  },
  RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: {
    text: '`401`s per client IP (IPv6: per /64) per minute (gateway: any key; fields: publishable keys); after that every request from it, even with a valid key, gets `429` until the minute is over. `0` disables',
  },
  RATE_LIMIT_STORE_TIMEOUT_MS: {
    text: "how long an API request waits for its rate-limit counters in Redis before going through as if under those limits (they fail open; the card-testing counters of browser tokenization wait for the command timeout, so that a gateway slowed by an attack still counts). Keep it below `REDIS_COMMAND_TIMEOUT_MS`: a client address's counters live in its own slot, so with that Cluster master down its requests otherwise wait the full command timeout although their key answered at once. A counter that answers within it is always enforced",
  },
  HSTS_MAX_AGE_SECONDS: {
    default: '`0` (off)',
    text: '`Strict-Transport-Security: max-age=…` on every response; set it (e.g. `31536000`) when clients reach the service over HTTPS through a TLS-terminating load balancer',
  },
  TESSERA_STATE_DIR: {
    default: '`./.tessera/<service>`',
    text: "development only: the service's own generated secret (the vault's key ring in `./.tessera/vault`, the API-key pepper in `./.tessera/gateway` and, the same one, in `./.tessera/admin` and `./.tessera/fields`; git-ignored). `npm start` takes it as the stack's directory (dev API key, dashboard password, its own Redis's data in `redis/`; default `./.tessera` where it runs) and tells each service only of its own subdirectory, where it also keeps that service's Redis password and `stack.json` for its CLI (which reads it from there)",
  },
  REQUEST_LOG_MAX_ENTRIES: {
    text: "entries kept in each merchant's request log (`GET /admin/v1/requests`, the dashboard's Requests page; trimmed approximately); `0` turns the log off",
  },
  REQUEST_LOG_MAX_AGE_SECONDS: {
    text: "the request log keeps entries this long (default 7 days); a merchant's log with nothing newer disappears",
  },
  VAULT_ADDR: {
    text: 'vault gRPC address: the vault listens on it (`host:port`); the clients dial it as a gRPC target, `host:port`, `dns:///host:port` or `ipv4:a:p,b:q`, balancing over every replica ([scaling.md](scaling.md))',
  },
  PROXY_ADDR: {
    text: 'proxy gRPC address: the proxy listens on it; the gateway dials it as a gRPC target like `VAULT_ADDR`, and so does the fields service for hosted payment pages with a completion URL (unset there: such a page says payments are unavailable and takes no card)',
  },
  VAULT_TIMEOUT_MS: {
    text: "deadline of every vault call; the vault answers within it (a stalled card store: `503` at the vault's `REDIS_COMMAND_TIMEOUT_MS`, at the latest 10 % before this deadline)",
  },
  REDIS_URL: {
    text: "`redis://` or `rediss://` (TLS) URL, with the service's own ACL user as `rediss://user:password@host:port` (password URL-encoded; never logged). Required by the gateway and the fields service, and by the vault unless `REDIS_CLUSTER_NODES` is set, in every `NODE_ENV`: they keep their data only in Redis (`npm start` runs a private redis-server and sets it)",
  },
  REDIS_TLS_CA_FILE: {
    alsoUsedBy: 'CLIs',
    text: "PEM CA of Redis's server certificate for a `rediss://` `REDIS_URL` (unset: the system's CAs); refused with a `redis://` URL",
  },
  REDIS_COMMAND_TIMEOUT_MS: {
    text: "a Redis command slower than this (counted from when it is issued, queueing included) fails as `503`; in the vault it bounds each card-store operation as a whole (queueing behind other commands included). Keep the vault's below `VAULT_TIMEOUT_MS` (see the deadline rule below)",
  },
  REDIS_CLUSTER_NODES: {
    alsoUsedBy: 'CLIs',
    text: 'CSV `host:port` of Redis Cluster seed nodes; `REDIS_URL` then only supplies credentials/TLS (required by the gateway)',
  },
  TLS_CA_FILE: {
    text: 'mutual TLS between the services (`npm run certs` makes a dev CA and certificates in `.tessera/certs`): the CA. `TLS_CA_FILE`, `TLS_CERT_FILE` and `TLS_KEY_FILE`: all three or none; required when `NODE_ENV=production`. Without them gRPC is plaintext and only a loopback bind address is accepted (an IP literal in 127.0.0.0/8, `[::1]` or `localhost`; never another name)',
  },
  TLS_CERT_FILE: { text: "the service's own certificate (PEM), see `TLS_CA_FILE`" },
  TLS_KEY_FILE: { text: "the service's private key (PEM), see `TLS_CA_FILE`" },
  TLS_PEER_GATEWAY: {
    text: "SAN DNS name of the gateway's certificate. The vault lets only the gateway Tokenize/GetToken/DeleteToken/RetainToken (and their batch forms); the proxy serves only the gateway",
  },
  TLS_PEER_VAULT: { text: "SAN DNS name of the vault's certificate" },
  TLS_PEER_PROXY: { text: "SAN DNS name of the proxy's certificate. The vault lets only the proxy Render/Preview" },
  TLS_PEER_FIELDS: {
    text: "SAN DNS name of the fields service's certificate. The vault lets it only Tokenize provisional tokens (answered without fingerprint or BIN) and AttachCvv under a CVC session it claims itself; the proxy lets it only CallCompletion (a merchant's completion endpoint for the hosted payment page, never the vault). Every other RPC is refused (docs/SECURITY.md)",
  },
  TLS_PEER_INBOUND: {
    default: 'vault: `inbound`; proxy: unset (no caller has its rights)',
    text: "SAN DNS name of the inbound service's certificate (inbound routes, [proxies.md](proxies.md#inbound-routes), [adr/0013](adr/0013-zero-code-proxies-placement.md)). The vault lets it only Tokenize, durable tokens and never `dedupe` (answered without fingerprint or BIN); the proxy lets it only ForwardUpstream (an inbound route's rewritten request to the merchant's upstream, never the vault; refused when the body or query still holds a card-number-like run) and readiness; every other RPC is refused",
  },
  METRICS_PORT: {
    text: 'Prometheus `GET /metrics` on its own listener (`0`: a free port, logged): `tessera_http_requests_total` / `tessera_http_request_duration_seconds` (gateway and fields, by route pattern and status), `tessera_rpc_requests_total{rpc,outcome}` / `tessera_rpc_duration_seconds` (vault operations, `ok` only once the reply went out, else `not_delivered`; proxy `Forward` with the PSP status class `psp_2xx`…`psp_5xx` or the error code, `CallCompletion` with the merchant endpoint status class `merchant_2xx`…`merchant_5xx` or the error code, `DeliverWebhook` with the receiver status class `receiver_2xx`…`receiver_5xx` or the error code, `ForwardUpstream` with the upstream status class `upstream_2xx`…`upstream_5xx` or the error code, counted when the streamed answer ends), `tessera_browser_tokens_refused_total{reason}` (card-testing refusals of the fields service: `key`, `ip`, `distinct_cards`, `form_session_failures`), process metrics. Labels never hold tokens, keys, merchants or card data',
  },
  METRICS_HOST: { text: 'bind address of the metrics listener' },
  GRPC_KEEPALIVE_TIME_MS: {
    text: "gRPC clients' keepalive ping interval; never below the servers' `GRPC_MIN_PING_INTERVAL_MS` ([scaling.md](scaling.md#settings))",
  },
  GRPC_KEEPALIVE_TIMEOUT_MS: { text: 'how long a client waits for a keepalive ping to be answered before it drops the connection' },
  GRPC_LIVENESS_INTERVAL_MS: {
    text: "how often a gRPC client asks each connected vault or proxy replica a health Check, to notice one that is hung (connection open, nothing answered) in seconds rather than after keepalive's 40 s ([failure-modes.md](failure-modes.md#faults))",
  },
  GRPC_LIVENESS_TIMEOUT_MS: {
    text: "a replica that does not answer that Check within this is hung: it gets no calls (with none left, calls are refused at once with `503`) until it answers one again. Keep it above the servers' `HEALTH_CHECK_TIMEOUT_MS`",
  },
  GRPC_MIN_PING_INTERVAL_MS: { text: 'the shortest keepalive ping interval a gRPC server accepts from a client' },
  GRPC_MAX_CONNECTION_AGE_MS: {
    text: 'a gRPC server closes each connection after this long, so clients re-resolve and find new replicas',
  },
  GRPC_MAX_CONNECTION_AGE_GRACE_MS: {
    text: 'calls in flight on a closing connection get this long to finish (above the longest call, a proxy call)',
  },
  HEALTH_POLL_INTERVAL_MS: { text: "how often a server re-checks its store, so that its gRPC health follows the store's" },
  HEALTH_CHECK_TIMEOUT_MS: { text: 'deadline of each of those store checks' },
};

const INTRO = `# Configuration

<!-- Generated by \`npm run docs:config\` from the services' config schemas and their descriptions
(services/*/src/configDocs.ts, packages/common/src/configDoc.ts). Do not edit by hand. -->

Each service validates its environment once at start and exits (code 78) listing every bad
variable. The gateway needs \`REDIS_URL\` in every \`NODE_ENV\`. \`NODE_ENV=production\` makes \`VAULT_KEYS\` (unless the KEK is in an HSM), \`API_KEY_PEPPER\` (or \`API_KEY_PEPPERS\`) and the vault's \`REDIS_URL\` mandatory
and refuses \`TESSERA_DEV_API_KEY\`.

`;

const OUTRO = `
The local sandbox PSP that \`npm start\` runs listens on \`SANDBOX_PSP_PORT\` (default \`8090\`).

**Deadlines nest**: each one is shorter than the one around it, so a failure surfaces as the inner
service's own error (\`503 service_unavailable\`, \`504 psp_timeout\`) rather than at the caller's
deadline (\`503\` after waiting it out for a vault call; \`502 psp_outcome_unknown\` for a proxy call, which
is stored under an \`Idempotency-Key\` and replayed):
vault \`REDIS_COMMAND_TIMEOUT_MS\` (the \`WAIT\` timeout of \`VAULT_WRITE_ACK=replica:N\` below it, checked
at start-up; likewise the gateway's for \`IDEMPOTENCY_WRITE_ACK\`) < \`VAULT_TIMEOUT_MS\` (gateway, proxy); proxy \`PSP_CONNECT_TIMEOUT_MS\` + \`VAULT_TIMEOUT_MS\` +
\`PSP_TIMEOUT_MS\` < gateway \`PROXY_TIMEOUT_MS\` (no one service knows both sides of this one: the proxy
checks the deadline each call arrives with and logs a warning). The vault also answers every call a little before the
caller's gRPC deadline (10 % of it, at least 50 ms), whatever its own settings.

Generate production secrets with \`openssl rand -base64 32\` (a vault key: \`VAULT_KEYS=k1:$(openssl rand -base64 32)\`).
`;

/** The variables of a config schema: its z.object, under any pipe around it. */
export function configSchemaShape(schema: z.ZodType): Record<string, z.ZodType> {
  const candidate = schema as unknown as { shape?: Record<string, z.ZodType>; def?: { in?: z.ZodType } };
  if (candidate.shape !== undefined) return candidate.shape;
  if (candidate.def?.in !== undefined) return configSchemaShape(candidate.def.in);
  throw new Error('a config schema must be a z.object (refinements allowed)');
}

/** The value a variable takes when unset, as the docs show it. */
function schemaDefault(name: string, field: z.ZodType): string {
  const parsed = field.safeParse(undefined);
  if (!parsed.success) return 'required';
  const value: unknown = parsed.data;
  if (value === undefined) return 'unset';
  if (Array.isArray(value) && value.length === 0) return 'empty';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return `\`${String(value)}\``;
  throw new Error(`${name}: its default cannot be shown; give it a \`default\` text in its docs`);
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * docs/configuration.md: one row per variable of every service's schema, in schema order. Throws
 * when a variable has no description, or a description names no variable, so neither can go stale.
 */
export function renderConfigurationMarkdown(services: readonly DocumentedSchema[], shared: ConfigDocs = sharedConfigDocs): string {
  interface Row {
    name: string;
    doc: VariableDoc;
    defaults: Map<string, string[]>;
    services: string[];
  }
  const rows = new Map<string, Row>();
  const problems: string[] = [];
  const sharedUsed = new Set<string>();
  for (const { service, schema, docs } of services) {
    const shape = configSchemaShape(schema);
    for (const name of Object.keys(docs)) {
      if (!(name in shape)) problems.push(`${service}: ${name} is described but not in the schema`);
      if (name in shared) problems.push(`${service}: ${name} is described both here and in the shared docs`);
    }
    for (const [name, field] of Object.entries(shape)) {
      const doc = docs[name] ?? shared[name];
      if (doc === undefined) {
        problems.push(`${service}: ${name} has no description`);
        continue;
      }
      if (docs[name] === undefined) sharedUsed.add(name);
      let row = rows.get(name);
      if (row === undefined) {
        row = { name, doc, defaults: new Map(), services: [] };
        rows.set(name, row);
      } else if (row.doc !== doc) {
        problems.push(`${name}: described by more than one service; describe it once in the shared docs`);
      }
      row.services.push(service);
      const shown = doc.default ?? schemaDefault(name, field);
      row.defaults.set(shown, [...(row.defaults.get(shown) ?? []), service]);
    }
  }
  for (const name of Object.keys(shared)) {
    if (!sharedUsed.has(name)) problems.push(`shared docs: ${name} is in no service's schema`);
  }
  if (problems.length > 0) throw new Error(`configuration docs are out of step with the schemas:\n  ${problems.join('\n  ')}`);

  const lines = ['| Variable | Service | Default | Meaning |', '|---|---|---|---|'];
  for (const row of rows.values()) {
    const users = [...row.services, ...(row.doc.alsoUsedBy === undefined ? [] : [row.doc.alsoUsedBy])].join(', ');
    const defaults =
      row.defaults.size === 1
        ? [...row.defaults.keys()][0]
        : [...row.defaults].map(([value, svcs]) => `${svcs.join(', ')}: ${value}`).join('; ');
    lines.push(`| \`${row.name}\` | ${users} | ${cell(defaults ?? '')} | ${cell(row.doc.text)} |`);
  }
  return `${INTRO}${lines.join('\n')}\n${OUTRO}`;
}
