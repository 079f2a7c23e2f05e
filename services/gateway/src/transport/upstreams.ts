import {
  callUnary,
  createBatcher,
  MAX_BATCH_BODY_BYTES,
  type ForwardRequest__Output,
  type DryRunResponse__Output,
  type ForwardResponse__Output,
  type ProxyClient,
  type TokenizeRequest,
  type TokenRecord__Output,
  type TokenRef,
  type TokenizeBatchItem,
  type ForwardBatchItem,
  type ForwardBatchResult__Output,
  type TokenizeBatchResponse,
  type VaultClient,
} from '@tessera/protos';
import { connectivityState, type Client } from '@grpc/grpc-js';
import { batchItemError, errorFromGrpc, errorRaisedByPeer, TesseraError } from '@tessera/common';

export interface CallContext {
  requestId: string;
}

export interface ReadyResult {
  ready: boolean;
  detail: string;
}

/**
 * A card to tokenize. `provisional` (default false) is for browser tokenization only: the token
 * then expires after the vault's BROWSER_TOKEN_TTL_SECONDS unless a secret key retains it.
 */
export type TokenizeInput = TokenizeRequest;

/**
 * What the gateway needs from the vault. Failures reject with a TesseraError (a peer's own error,
 * or 503/504 when it is down or slow), so routes never see raw gRPC errors.
 */
export interface VaultApi {
  tokenize(request: TokenizeInput, ctx: CallContext): Promise<TokenRecord__Output>;
  getToken(ref: TokenRef, ctx: CallContext): Promise<TokenRecord__Output>;
  /** A provisional token becomes an ordinary one; idempotent. */
  retainToken(ref: TokenRef, ctx: CallContext): Promise<TokenRecord__Output>;
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

/** The most cards in one TokenizeBatch call. */
export const MAX_TOKENIZE_BATCH = 64;

/**
 * Tokenize requests that arrive together go to the vault as one TokenizeBatch call: one gRPC
 * call, one store write and one write acknowledgement per group instead of per card.
 */
function batchedTokenize(client: VaultClient, timeoutMs: number): VaultApi['tokenize'] {
  const tokenize = createBatcher<TokenizeBatchItem & { request: TokenizeRequest }, TokenRecord__Output>({
    maxBatch: MAX_TOKENIZE_BATCH,
    sendOne: ({ request, requestId }) =>
      mapped(callUnary<TokenizeRequest, TokenRecord__Output>(client, client.Tokenize, request, { timeoutMs, requestId }), client),
    sendBatch: async (items, deliver) => {
      const { results } = await callUnary<{ items: TokenizeBatchItem[] }, TokenizeBatchResponse>(
        client,
        client.TokenizeBatch,
        { items },
        { timeoutMs },
      );
      results.forEach((result, i) => deliver(i, result.record ?? batchItemError(result.errorJson)));
    },
    failed: (err) => mapped(Promise.reject(err), client),
  });
  return (request, ctx) => tokenize({ request: { ...request, provisional: request.provisional === true }, requestId: ctx.requestId });
}

export function vaultApiFromClient(client: VaultClient, timeoutMs: number): VaultApi {
  return {
    tokenize: batchedTokenize(client, timeoutMs),
    getToken: (ref, ctx) => mapped(callUnary(client, client.GetToken, ref, { timeoutMs, requestId: ctx.requestId }), client),
    retainToken: (ref, ctx) => mapped(callUnary(client, client.RetainToken, ref, { timeoutMs, requestId: ctx.requestId }), client),
    deleteToken: async (ref, ctx) => {
      await mapped(callUnary(client, client.DeleteToken, ref, { timeoutMs, requestId: ctx.requestId }), client);
    },
    ready: (ctx) => mapped(callUnary(client, client.Ready, {}, { timeoutMs: ctx.timeoutMs, requestId: ctx.requestId })),
    close: () => client.close(),
  };
}

/**
 * Forward may reach the PSP, so its failures are sorted by what the gateway can prove. Nothing
 * was sent when the proxy answered with its own typed error (it refused before, or reported
 * what the PSP did), or when the call was never started because no connection to the proxy was
 * ready (see proxyConnected). Once a call has started and no typed answer came back (the proxy
 * died, the connection broke, the deadline passed), the PSP may have received the request:
 * 502 psp_outcome_unknown, an answer the Idempotency-Key keeps so that a retry never charges twice.
 */
function forwardFailure(err: unknown): TesseraError {
  if (err instanceof TesseraError) return err;
  return errorRaisedByPeer(err) ?? new TesseraError('psp_outcome_unknown', { cause: err });
}

const UNAVAILABLE_STATES = new Set<number>([connectivityState.TRANSIENT_FAILURE, connectivityState.SHUTDOWN]);

/**
 * Resolves once the channel to the proxy has a ready connection, so a Forward is only started
 * when it can be written. A channel that is failing, or does not connect before the deadline,
 * means nothing was started: 503, safe to retry (grpc-js cannot say whether a call it had started
 * was ever written, so that question is settled before starting it).
 */
function proxyConnected(client: Client, deadline: number): Promise<void> | undefined {
  const channel = client.getChannel();
  const unavailable = (cause?: unknown) =>
    new TesseraError('service_unavailable', { message: 'The proxy is not reachable; nothing was sent.', cause });
  const first = channel.getConnectivityState(true);
  if (first === connectivityState.READY) return undefined;
  return new Promise<void>((resolve, reject) => {
    const check = (state: number): void => {
      if (state === connectivityState.READY) return resolve();
      if (UNAVAILABLE_STATES.has(state)) return reject(unavailable());
      channel.watchConnectivityState(state, deadline, (err) => {
        if (err) reject(unavailable(err));
        else check(channel.getConnectivityState(true));
      });
    };
    check(first);
  });
}

/** The most requests in one ForwardBatch call. */
export const MAX_FORWARD_BATCH = 64;

/**
 * /v1/proxy requests that arrive together go to the proxy as one ForwardBatch call, whose answers
 * stream back one by one as each PSP answers (a slow PSP holds up nobody else).
 */
function batchedForward(client: ProxyClient, timeoutMs: number): ProxyApi['forward'] {
  const forward = createBatcher<ForwardBatchItem & { request: ForwardRequest__Output }, ForwardResponse__Output>({
    maxBatch: MAX_FORWARD_BATCH,
    maxBatchBytes: MAX_BATCH_BODY_BYTES,
    weigh: ({ request }) =>
      Buffer.byteLength(request.bodyTemplate) +
      Buffer.byteLength(request.url) +
      request.headers.reduce((sum, header) => sum + Buffer.byteLength(header.name ?? '') + Buffer.byteLength(header.value ?? ''), 0),
    sendOne: async ({ request, requestId }) => {
      const deadline = Date.now() + timeoutMs;
      await proxyConnected(client, deadline);
      try {
        return await callUnary<ForwardRequest__Output, ForwardResponse__Output>(client, client.Forward, request, {
          timeoutMs: Math.max(1, deadline - Date.now()),
          requestId,
        });
      } catch (err) {
        throw forwardFailure(err);
      }
    },
    sendBatch: async (items, deliver) => {
      const deadline = Date.now() + timeoutMs;
      await proxyConnected(client, deadline);
      const answered = new Set<number>();
      await new Promise<void>((resolve, reject) => {
        const call = client.ForwardBatch({ items }, { deadline: new Date(deadline) });
        call.on('data', (result: ForwardBatchResult__Output) => {
          answered.add(result.index);
          deliver(result.index, result.response ?? batchItemError(result.errorJson));
        });
        call.on('error', reject);
        call.on('end', resolve);
      });
      // A stream that ended without an item's answer says nothing about what its PSP received.
      items.forEach((_, i) => {
        if (!answered.has(i)) deliver(i, new TesseraError('psp_outcome_unknown'));
      });
    },
    // The batch call's own failure leaves every item not yet answered in the same state as a lone call.
    failed: (err) => Promise.reject(forwardFailure(err)),
  });
  return (request, ctx) => forward({ request, requestId: ctx.requestId });
}

export function proxyApiFromClient(client: ProxyClient, timeoutMs: number): ProxyApi {
  return {
    forward: batchedForward(client, timeoutMs),
    dryRun: (request, ctx) => mapped(callUnary(client, client.DryRun, request, { timeoutMs, requestId: ctx.requestId }), client),
    ready: (ctx) => mapped(callUnary(client, client.Ready, {}, { timeoutMs: ctx.timeoutMs, requestId: ctx.requestId })),
    close: () => client.close(),
  };
}
