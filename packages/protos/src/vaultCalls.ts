import type { VaultClient } from './generated/tessera/vault/v1/Vault';
import type { TokenRecord__Output } from './generated/tessera/vault/v1/TokenRecord';
import type { TokenizeBatchItem } from './generated/tessera/vault/v1/TokenizeBatchItem';
import type { TokenizeBatchResponse__Output } from './generated/tessera/vault/v1/TokenizeBatchResponse';
import {
  attachCvvRequestToWire,
  tokenizeRequestToWire,
  tokenRefToWire,
  updateTokenRequestToWire,
  type AttachCvvRequest,
  type TokenizeRequest,
  type TokenRef,
  type UpdateTokenRequest,
} from './contract';
import { createBatcher } from './batching';
import { batchItemError } from './grpcErrors';
import { call } from './edge';
import { readinessOverChannel, type Readiness } from './health';
import { clientCredentials, tlsChannelOptions, type TlsMaterial } from './tls';
import { clientChannelOptions, createVaultClient, VAULT_SERVICE_NAME, type ClientTuning } from './index';

/**
 * The vault's RPCs as its HTTP callers (the gateway, the fields service) make them: one deadline
 * per call, the request id in the metadata, and every failure a TesseraError (see `call`). Each
 * caller hands its use cases only the calls its port names, and the vault's caller policy allows
 * each identity only those.
 */

/** The most cards in one TokenizeBatch call. */
export const MAX_TOKENIZE_BATCH = 64;

export interface VaultCallContext {
  requestId: string;
}

export interface VaultCalls {
  /** `provisional` (default false): the token expires after the vault's BROWSER_TOKEN_TTL_SECONDS unless retained. */
  tokenize(request: TokenizeRequest, ctx: VaultCallContext): Promise<TokenRecord__Output>;
  getToken(ref: TokenRef, ctx: VaultCallContext): Promise<TokenRecord__Output>;
  /** A provisional token becomes an ordinary one; idempotent. */
  retainToken(ref: TokenRef, ctx: VaultCallContext): Promise<TokenRecord__Output>;
  deleteToken(ref: TokenRef, ctx: VaultCallContext): Promise<void>;
  /** A stored card's new expiry and/or holder name (0 / '' keep the stored value). */
  updateToken(request: UpdateTokenRequest, ctx: VaultCallContext): Promise<TokenRecord__Output>;
  /** A freshly collected CVV for an existing token, consumed by its first render; `cvcSession`: the grant the vault claims. */
  attachCvv(request: AttachCvvRequest, ctx: VaultCallContext): Promise<TokenRecord__Output>;
  /** grpc.health.v1 over the calls' own channel. */
  ready(ctx: VaultCallContext & { timeoutMs: number }): Promise<Readiness>;
  close(): void;
}

/**
 * Tokenize requests that arrive together go to the vault as one TokenizeBatch call: one gRPC
 * call, one store write and one write acknowledgement per group instead of per card.
 */
function batchedTokenize(client: VaultClient, timeoutMs: number): VaultCalls['tokenize'] {
  const tokenize = createBatcher<{ request: TokenizeRequest; requestId: string }, TokenRecord__Output>({
    maxBatch: MAX_TOKENIZE_BATCH,
    sendOne: ({ request, requestId }) => call(client, client.Tokenize, tokenizeRequestToWire(request), { timeoutMs, requestId }),
    sendBatch: async (items, deliver) => {
      const { results } = await call<{ items: TokenizeBatchItem[] }, TokenizeBatchResponse__Output>(
        client,
        client.TokenizeBatch,
        { items: items.map(({ request, requestId }) => ({ requestId, request: tokenizeRequestToWire(request) })) },
        { timeoutMs },
      );
      results.forEach((result, i) => deliver(i, result.record ?? batchItemError(result)));
    },
  });
  return (request, ctx) => tokenize({ request, requestId: ctx.requestId });
}

/** Every vault RPC an HTTP service may make, each under `timeoutMs` (VAULT_TIMEOUT_MS). */
export function vaultCalls(client: VaultClient, timeoutMs: number): VaultCalls {
  return {
    tokenize: batchedTokenize(client, timeoutMs),
    getToken: (ref, ctx) => call(client, client.GetToken, tokenRefToWire(ref), { timeoutMs, requestId: ctx.requestId }),
    retainToken: (ref, ctx) => call(client, client.RetainToken, tokenRefToWire(ref), { timeoutMs, requestId: ctx.requestId }),
    deleteToken: async (ref, ctx) => {
      await call(client, client.DeleteToken, tokenRefToWire(ref), { timeoutMs, requestId: ctx.requestId });
    },
    updateToken: (request, ctx) =>
      call(client, client.UpdateToken, updateTokenRequestToWire(request), { timeoutMs, requestId: ctx.requestId }),
    attachCvv: (request, ctx) => call(client, client.AttachCvv, attachCvvRequestToWire(request), { timeoutMs, requestId: ctx.requestId }),
    ready: readinessOverChannel(client, VAULT_SERVICE_NAME, 'vault'),
    close: () => client.close(),
  };
}

export interface VaultChannelSettings {
  /** VAULT_ADDR: host:port, dns:///host:port or ipv4:a:p,b:q. */
  address: string;
  /** The caller's own mTLS identity; undefined: plaintext (development on loopback only, which each config enforces). */
  tls: TlsMaterial | undefined;
  /** TLS_PEER_VAULT: the SAN the vault's certificate must carry. */
  peerName: string;
  /** GRPC_* keepalive and liveness (grpcClientTuning). */
  tuning: ClientTuning;
}

/** A vault client balanced round_robin over every replica its target resolves to that reports SERVING. */
export function connectVaultClient(settings: VaultChannelSettings): VaultClient {
  return createVaultClient(settings.address, clientCredentials(settings.tls), {
    ...clientChannelOptions(settings.tuning),
    ...tlsChannelOptions(settings.tls, settings.peerName),
  });
}
