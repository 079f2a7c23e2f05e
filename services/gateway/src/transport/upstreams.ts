import {
  callUnary,
  type ForwardRequest__Output,
  type DryRunResponse__Output,
  type ForwardResponse__Output,
  type ProxyClient,
  type TokenizeRequest,
  type TokenRecord__Output,
  type TokenRef,
  type TokenizeBatchItem,
  type TokenizeBatchResponse,
  type VaultClient,
} from '@tessera/protos';
import { connectivityState, status as grpcStatus } from '@grpc/grpc-js';
import { errorFromGrpc, TesseraError, tesseraErrorFromJson } from '@tessera/common';

export interface CallContext {
  requestId: string;
}

export interface ReadyResult {
  ready: boolean;
  detail: string;
}

/**
 * What the gateway needs from the vault. Failures reject with a TesseraError (a peer's own error,
 * or 503/504 when it is down or slow), so routes never see raw gRPC errors.
 */
export interface VaultApi {
  tokenize(request: TokenizeRequest, ctx: CallContext): Promise<TokenRecord__Output>;
  getToken(ref: TokenRef, ctx: CallContext): Promise<TokenRecord__Output>;
  deleteToken(ref: TokenRef, ctx: CallContext): Promise<void>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<ReadyResult>;
  close(): void;
}

export interface ProxyApi {
  forward(request: ForwardRequest__Output, ctx: CallContext): Promise<ForwardResponse__Output>;
  /** The checks of forward and a masked preview of the body; nothing is sent. */
  dryRun(request: ForwardRequest__Output, ctx: CallContext): Promise<DryRunResponse__Output>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<ReadyResult>;
  close(): void;
}

/**
 * A deadline that expires while the channel has no working connection (the peer is down, or
 * accepts TCP but never completes the HTTP/2 handshake) means the call was never delivered:
 * that is the peer being unavailable (503, safe to retry), not a slow answer (504).
 */
async function mapped<T>(call: Promise<T>, client?: { getChannel(): { getConnectivityState(tryToConnect: boolean): number } }): Promise<T> {
  try {
    return await call;
  } catch (err) {
    const error = errorFromGrpc(err);
    if (
      error.code === 'upstream_timeout' &&
      client !== undefined &&
      client.getChannel().getConnectivityState(false) !== connectivityState.READY
    ) {
      throw new TesseraError('service_unavailable', { cause: err });
    }
    throw error;
  }
}

interface PendingTokenize {
  item: TokenizeBatchItem & { request: TokenizeRequest };
  resolve: (record: TokenRecord__Output) => void;
  reject: (err: unknown) => void;
}

/** The most cards in one TokenizeBatch call; more waiting requests go in further calls at once. */
export const MAX_TOKENIZE_BATCH = 64;
/** How long a vault that does not know TokenizeBatch (an older version mid-upgrade) is sent single calls. */
const BATCH_UNSUPPORTED_RETRY_MS = 60_000;

/**
 * Tokenize requests that reach this point in the same turn of the event loop go to the vault as
 * one TokenizeBatch call. Under load that is what makes the vault hop cheap: one gRPC call, one
 * store write and one write acknowledgement per group instead of per card. A lone request waits
 * for nobody (it is sent at the end of the current turn, as a plain Tokenize call), and each
 * request still gets its own answer or refusal.
 */
export function createTokenizeBatcher(
  client: VaultClient,
  timeoutMs: number,
  maxBatch = MAX_TOKENIZE_BATCH,
): (request: TokenizeRequest, ctx: CallContext) => Promise<TokenRecord__Output> {
  let queue: PendingTokenize[] = [];
  let batchUnsupportedUntil = 0;

  const sendOne = (pending: PendingTokenize): void => {
    const { request, requestId } = pending.item;
    mapped(callUnary<TokenizeRequest, TokenRecord__Output>(client, client.Tokenize, request, { timeoutMs, requestId }), client).then(
      pending.resolve,
      pending.reject,
    );
  };

  const sendBatch = (batch: PendingTokenize[]): void => {
    callUnary<{ items: TokenizeBatchItem[] }, TokenizeBatchResponse>(
      client,
      client.TokenizeBatch,
      { items: batch.map((pending) => pending.item) },
      { timeoutMs },
    ).then(
      (response) => {
        batch.forEach((pending, i) => {
          const result = response.results[i];
          if (result?.record) pending.resolve(result.record);
          else pending.reject((result?.errorJson && tesseraErrorFromJson(result.errorJson)) || new TesseraError('internal_error'));
        });
      },
      (err: unknown) => {
        if ((err as { code?: unknown }).code === grpcStatus.UNIMPLEMENTED) {
          batchUnsupportedUntil = Date.now() + BATCH_UNSUPPORTED_RETRY_MS;
          batch.forEach(sendOne);
          return;
        }
        mapped(Promise.reject(err), client).catch((error: unknown) => batch.forEach((pending) => pending.reject(error)));
      },
    );
  };

  const flush = (): void => {
    const waiting = queue;
    queue = [];
    for (let start = 0; start < waiting.length; start += maxBatch) {
      const batch = waiting.slice(start, start + maxBatch);
      if (batch.length === 1 || Date.now() < batchUnsupportedUntil) batch.forEach(sendOne);
      else sendBatch(batch);
    }
  };

  return (request, ctx) =>
    new Promise<TokenRecord__Output>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ item: { request, requestId: ctx.requestId }, resolve, reject });
    });
}

export function vaultApiFromClient(client: VaultClient, timeoutMs: number): VaultApi {
  return {
    tokenize: createTokenizeBatcher(client, timeoutMs),
    getToken: (ref, ctx) => mapped(callUnary(client, client.GetToken, ref, { timeoutMs, requestId: ctx.requestId }), client),
    deleteToken: async (ref, ctx) => {
      await mapped(callUnary(client, client.DeleteToken, ref, { timeoutMs, requestId: ctx.requestId }), client);
    },
    ready: (ctx) => mapped(callUnary(client, client.Ready, {}, { timeoutMs: ctx.timeoutMs, requestId: ctx.requestId })),
    close: () => client.close(),
  };
}

export function proxyApiFromClient(client: ProxyClient, timeoutMs: number): ProxyApi {
  return {
    forward: (request, ctx) => mapped(callUnary(client, client.Forward, request, { timeoutMs, requestId: ctx.requestId }), client),
    dryRun: (request, ctx) => mapped(callUnary(client, client.DryRun, request, { timeoutMs, requestId: ctx.requestId }), client),
    ready: (ctx) => mapped(callUnary(client, client.Ready, {}, { timeoutMs: ctx.timeoutMs, requestId: ctx.requestId })),
    close: () => client.close(),
  };
}
