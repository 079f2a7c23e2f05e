import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { mayHoldCardNumber } from '@tessera/common';
import type { ProtoGrpcType as VaultProto } from './generated/vault';
import type { ProtoGrpcType as ProxyProto } from './generated/proxy';
import type { VaultClient, VaultHandlers } from './generated/tessera/vault/v1/Vault';
import type { ProxyClient, ProxyHandlers } from './generated/tessera/proxy/v1/Proxy';

export type { VaultClient, VaultHandlers, ProxyClient, ProxyHandlers };
export type { TokenizeRequest__Output as TokenizeRequest } from './generated/tessera/vault/v1/TokenizeRequest';
export type { TokenRecord, TokenRecord__Output } from './generated/tessera/vault/v1/TokenRecord';
export type { TokenizeBatchItem } from './generated/tessera/vault/v1/TokenizeBatchItem';
export type { TokenizeBatchResponse__Output as TokenizeBatchResponse } from './generated/tessera/vault/v1/TokenizeBatchResponse';
export type { TokenRef__Output as TokenRef } from './generated/tessera/vault/v1/TokenRef';
export type { RenderRequest__Output as RenderRequest } from './generated/tessera/vault/v1/RenderRequest';
export type { RenderResponse__Output as RenderResponse } from './generated/tessera/vault/v1/RenderResponse';
export type { RenderBatchItem } from './generated/tessera/vault/v1/RenderBatchItem';
export type { RenderBatchResponse__Output as RenderBatchResponse } from './generated/tessera/vault/v1/RenderBatchResponse';
export type { ForwardRequest, ForwardRequest__Output } from './generated/tessera/proxy/v1/ForwardRequest';
export type { ForwardBatchItem } from './generated/tessera/proxy/v1/ForwardBatchItem';
export type { ForwardBatchResult, ForwardBatchResult__Output } from './generated/tessera/proxy/v1/ForwardBatchResult';
export type { ForwardResponse, ForwardResponse__Output } from './generated/tessera/proxy/v1/ForwardResponse';
export type { Header__Output as Header } from './generated/tessera/proxy/v1/Header';
export type { PreviewResponse, PreviewResponse__Output } from './generated/tessera/vault/v1/PreviewResponse';
export type { DryRunResponse, DryRunResponse__Output } from './generated/tessera/proxy/v1/DryRunResponse';

/** Works from both src/ (tests) and dist/ (built code): both sit two levels below the package. */
export const PROTO_ROOT = path.resolve(__dirname, '../../../proto');

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

export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  // A dead peer must surface as UNAVAILABLE quickly rather than after minutes of backoff.
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 2_000,
};

export const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 10_000,
};

/** `options` add to CHANNEL_OPTIONS, e.g. tlsChannelOptions() for the expected server name. */
export function createVaultClient(
  address: string,
  credentials = grpc.credentials.createInsecure(),
  options: grpc.ChannelOptions = {},
): VaultClient {
  return new vaultProto.tessera.vault.v1.Vault(address, credentials, { ...CHANNEL_OPTIONS, ...options });
}

export function createProxyClient(
  address: string,
  credentials = grpc.credentials.createInsecure(),
  options: grpc.ChannelOptions = {},
): ProxyClient {
  return new proxyProto.tessera.proxy.v1.Proxy(address, credentials, { ...CHANNEL_OPTIONS, ...options });
}

export * from './tls';
export * from './health';
export * from './batching';

export const REQUEST_ID_METADATA_KEY = 'x-request-id';

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/**
 * Calls a unary method with a deadline (every network edge has one) and the request id in
 * metadata. Rejects with the raw grpc ServiceError; callers map it with errorFromGrpc.
 */
export function callUnary<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  opts: { timeoutMs: number; requestId?: string },
): Promise<Res> {
  const metadata = new grpc.Metadata();
  if (opts.requestId) metadata.set(REQUEST_ID_METADATA_KEY, opts.requestId);
  const deadline = new Date(Date.now() + opts.timeoutMs);
  return new Promise<Res>((resolve, reject) => {
    method.call(client, request, metadata, { deadline }, (err, res) => {
      if (err) reject(err);
      else if (res === undefined) reject(new Error('empty gRPC response'));
      else resolve(res);
    });
  });
}

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
