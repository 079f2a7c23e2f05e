import {
  callUnary,
  type ForwardRequest__Output,
  type DryRunResponse__Output,
  type ForwardResponse__Output,
  type ProxyClient,
  type TokenizeRequest,
  type TokenRecord__Output,
  type TokenRef,
  type VaultClient,
} from '@tessera/protos';
import { errorFromGrpc } from '@tessera/common';

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

async function mapped<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw errorFromGrpc(err);
  }
}

export function vaultApiFromClient(client: VaultClient, timeoutMs: number): VaultApi {
  return {
    tokenize: (request, ctx) => mapped(callUnary(client, client.Tokenize, request, { timeoutMs, requestId: ctx.requestId })),
    getToken: (ref, ctx) => mapped(callUnary(client, client.GetToken, ref, { timeoutMs, requestId: ctx.requestId })),
    deleteToken: async (ref, ctx) => {
      await mapped(callUnary(client, client.DeleteToken, ref, { timeoutMs, requestId: ctx.requestId }));
    },
    ready: (ctx) => mapped(callUnary(client, client.Ready, {}, { timeoutMs: ctx.timeoutMs, requestId: ctx.requestId })),
    close: () => client.close(),
  };
}

export function proxyApiFromClient(client: ProxyClient, timeoutMs: number): ProxyApi {
  return {
    forward: (request, ctx) => mapped(callUnary(client, client.Forward, request, { timeoutMs, requestId: ctx.requestId })),
    dryRun: (request, ctx) => mapped(callUnary(client, client.DryRun, request, { timeoutMs, requestId: ctx.requestId })),
    ready: (ctx) => mapped(callUnary(client, client.Ready, {}, { timeoutMs: ctx.timeoutMs, requestId: ctx.requestId })),
    close: () => client.close(),
  };
}
