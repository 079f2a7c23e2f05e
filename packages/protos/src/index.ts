import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { mayHoldCardNumber } from '@tessera/common';
import { balancedChannelOptions, livenessChannelOptions } from './loadBalancing';
import { REQUEST_ID_METADATA_KEY } from './edge';
import { PROTO_ROOT } from './protoFiles';
import type { ProtoGrpcType as VaultProto } from './generated/vault';
import type { ProtoGrpcType as ProxyProto } from './generated/proxy';
import type { VaultClient, VaultHandlers } from './generated/tessera/vault/v1/Vault';
import type { ProxyClient, ProxyHandlers } from './generated/tessera/proxy/v1/Proxy';

export type { VaultClient, VaultHandlers, ProxyClient, ProxyHandlers };
export type { TokenRecord, TokenRecord__Output } from './generated/tessera/vault/v1/TokenRecord';
export type { TokenizeBatchItem } from './generated/tessera/vault/v1/TokenizeBatchItem';
export type { TokenizeBatchResponse__Output as TokenizeBatchResponse } from './generated/tessera/vault/v1/TokenizeBatchResponse';
export type { RenderResponse__Output as RenderResponse } from './generated/tessera/vault/v1/RenderResponse';
export type { RenderBatchItem } from './generated/tessera/vault/v1/RenderBatchItem';
export type { RenderBatchResponse__Output as RenderBatchResponse } from './generated/tessera/vault/v1/RenderBatchResponse';
export type { ForwardBatchItem } from './generated/tessera/proxy/v1/ForwardBatchItem';
export type { ForwardBatchResponse, ForwardBatchResponse__Output } from './generated/tessera/proxy/v1/ForwardBatchResponse';
export type { ForwardResponse, ForwardResponse__Output } from './generated/tessera/proxy/v1/ForwardResponse';
export type { Header__Output as Header } from './generated/tessera/proxy/v1/Header';
export type { CallCompletionRequest } from './generated/tessera/proxy/v1/CallCompletionRequest';
export type { CallCompletionResponse__Output } from './generated/tessera/proxy/v1/CallCompletionResponse';
export type { DeliverWebhookRequest } from './generated/tessera/proxy/v1/DeliverWebhookRequest';
export type { DeliverWebhookResponse__Output } from './generated/tessera/proxy/v1/DeliverWebhookResponse';
export type { PreviewResponse, PreviewResponse__Output } from './generated/tessera/vault/v1/PreviewResponse';
export * from './contract';

const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

function load<T>(file: string): T {
  const definition = protoLoader.loadSync(file, LOADER_OPTIONS);
  return grpc.loadPackageDefinition(definition) as unknown as T;
}

const vaultProto = load<VaultProto>('tessera/vault/v1/vault.proto');
const proxyProto = load<ProxyProto>('tessera/proxy/v1/proxy.proto');

export const vaultService = vaultProto.tessera.vault.v1.Vault.service;
export const proxyService = proxyProto.tessera.proxy.v1.Proxy.service;

/** PSP responses up to 10 MiB travel through gRPC; leave room for headers and framing. */
export const MAX_MESSAGE_BYTES = 12 * 1024 * 1024;
/**
 * The most body bytes one batch call carries: a quarter of the message limit, which leaves room
 * for headers, the batch's framing and bodies that grow when card data is filled in.
 */
export const MAX_BATCH_BODY_BYTES = MAX_MESSAGE_BYTES / 4;

/** Full service names, as grpc.health.v1 knows them and client health checks ask for them. */
export const VAULT_SERVICE_NAME = 'tessera.vault.v1.Vault';
export const PROXY_SERVICE_NAME = 'tessera.proxy.v1.Proxy';

/**
 * Keepalive and connection age, named in each service's config (GRPC_* variables, see
 * docs/scaling.md). The two sides must agree: a client that pings more often than the server
 * permits is sent GOAWAY too_many_pings by servers and proxies that enforce the limit, so the
 * client's keepalive time is never below the server's minimum ping interval.
 */
export const GRPC_DEFAULTS = {
  /** Client: ping an idle connection this often, so a dead peer (a killed node) is noticed. */
  keepaliveTimeMs: 30_000,
  keepaliveTimeoutMs: 10_000,
  /**
   * Client: ask each connected replica a health Check this often, and take it out of the rotation
   * when one gets no answer within the timeout (a hung process keeps its connection open, so
   * keepalive would notice only after keepaliveTimeMs + keepaliveTimeoutMs). The timeout must be
   * above the servers' HEALTH_CHECK_TIMEOUT_MS, the longest a live server takes to answer.
   */
  livenessIntervalMs: 500,
  livenessTimeoutMs: 1_000,
  /** Server: the most frequent pings it accepts; at most the clients' keepalive time. */
  minPingIntervalMs: 10_000,
  /**
   * Server: connections are closed (GOAWAY, then a fresh connection) after this long, so clients
   * re-resolve DNS and reach replicas added since; grpc-js adds ±10 % jitter.
   */
  maxConnectionAgeMs: 300_000,
  /** Server: calls in flight on a closing connection get this long; above the longest call (a 40 s proxy call). */
  maxConnectionAgeGraceMs: 60_000,
} as const;

export interface ClientTuning {
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  livenessIntervalMs: number;
  livenessTimeoutMs: number;
}

export interface ServerTuning {
  minPingIntervalMs: number;
  maxConnectionAgeMs: number;
  maxConnectionAgeGraceMs: number;
}

export function clientChannelOptions(tuning: ClientTuning = GRPC_DEFAULTS): grpc.ChannelOptions {
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.keepalive_time_ms': tuning.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': tuning.keepaliveTimeoutMs,
    'grpc.keepalive_permit_without_calls': 1,
    ...livenessChannelOptions(tuning),
    // A dead peer must surface as UNAVAILABLE quickly rather than after minutes of backoff.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
  };
}

export function serverOptions(tuning: ServerTuning = GRPC_DEFAULTS): grpc.ServerOptions {
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': tuning.minPingIntervalMs,
    'grpc.max_connection_age_ms': tuning.maxConnectionAgeMs,
    'grpc.max_connection_age_grace_ms': tuning.maxConnectionAgeGraceMs,
  };
}

export const CHANNEL_OPTIONS: grpc.ChannelOptions = clientChannelOptions();
export const SERVER_OPTIONS: grpc.ServerOptions = serverOptions();

/**
 * `address` is a gRPC target: `host:port` or `dns:///host:port` (every address DNS returns, e.g. a
 * headless Service), or `ipv4:a:p,b:q` (a fixed list). Calls are balanced round_robin over the
 * replicas that report SERVING (see loadBalancing.ts). `options` add to CHANNEL_OPTIONS, e.g.
 * tlsChannelOptions() for the expected server name and clientChannelOptions() from config.
 */
export function createVaultClient(address: string, credentials?: grpc.ChannelCredentials, options?: grpc.ChannelOptions): VaultClient {
  return balancedClient(vaultProto.tessera.vault.v1.Vault, VAULT_SERVICE_NAME, address, credentials, options);
}

export function createProxyClient(address: string, credentials?: grpc.ChannelCredentials, options?: grpc.ChannelOptions): ProxyClient {
  return balancedClient(proxyProto.tessera.proxy.v1.Proxy, PROXY_SERVICE_NAME, address, credentials, options);
}

function balancedClient<C>(
  Client: new (address: string, credentials: grpc.ChannelCredentials, options: grpc.ChannelOptions) => C,
  serviceName: string,
  address: string,
  credentials = grpc.credentials.createInsecure(),
  options: grpc.ChannelOptions = {},
): C {
  return new Client(address, credentials, { ...CHANNEL_OPTIONS, ...balancedChannelOptions(serviceName), ...options });
}

export { PROTO_ROOT } from './protoFiles';
export type { Refusal, Refusal__Output } from './generated/tessera/common/v1/Refusal';
export * from './tls';
export * from './health';
export * from './batching';
export * from './loadBalancing';

export * from './grpcErrors';
export * from './edge';
export * from './serve';
export * from './vaultCalls';
export * from './completionCalls';
export * from './webhookDeliveries';
export * from './upstreamCalls';
export * from './routeCalls';

/** Reads the request id a caller put into gRPC metadata, if any. */
export function requestIdFromMetadata(metadata: grpc.Metadata): string | undefined {
  return wellFormedRequestId(metadata.get(REQUEST_ID_METADATA_KEY)[0]);
}

/**
 * A caller's request id is echoed and logged as given only when it looks like one, and never when
 * it could be a card number (`4242_4242_4242_4242` is as well-formed as any id): every service
 * reads request ids through here, so none of them logs such an id.
 */
export function wellFormedRequestId(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\w.-]{1,128}$/.test(value) && !mayHoldCardNumber(value) ? value : undefined;
}
