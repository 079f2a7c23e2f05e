import type {
  AttachCvvRequest,
  DryRunReport,
  ForwardCall,
  ForwardResponse__Output,
  TokenizeRequest,
  TokenRecord__Output,
  TokenRef,
  UpdateTokenRequest,
} from '@tessera/protos';

/**
 * The vault and the proxy as the gateway's use cases see them. The gRPC adapters that implement
 * them live in transport/upstreams.ts; the stores the use cases need (detokenization log, merchant
 * settings, form and CVC sessions) are the store/ interfaces themselves.
 */

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
 * or 503 when it is down, hung or too slow: see callError), so use cases never see raw gRPC errors.
 */
export interface VaultApi {
  tokenize(request: TokenizeInput, ctx: CallContext): Promise<TokenRecord__Output>;
  getToken(ref: TokenRef, ctx: CallContext): Promise<TokenRecord__Output>;
  /** A provisional token becomes an ordinary one; idempotent. */
  retainToken(ref: TokenRef, ctx: CallContext): Promise<TokenRecord__Output>;
  deleteToken(ref: TokenRef, ctx: CallContext): Promise<void>;
  /** A stored card's new expiry and/or holder name (0 / '' keep the stored value). */
  updateToken(request: UpdateTokenRequest, ctx: CallContext): Promise<TokenRecord__Output>;
  /** A freshly collected CVV for an existing token, consumed by its first render. */
  attachCvv(request: AttachCvvRequest, ctx: CallContext): Promise<TokenRecord__Output>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<ReadyResult>;
  close(): void;
}

export interface ProxyApi {
  forward(request: ForwardCall, ctx: CallContext): Promise<ForwardResponse__Output>;
  /** The checks of forward and a masked preview of the body; nothing is sent. */
  dryRun(request: ForwardCall, ctx: CallContext): Promise<DryRunReport>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<ReadyResult>;
  close(): void;
}
