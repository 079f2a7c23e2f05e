import type { ProxyClient } from './generated/tessera/proxy/v1/Proxy';
import type { CallCompletionRequest } from './generated/tessera/proxy/v1/CallCompletionRequest';
import type { CallCompletionResponse__Output } from './generated/tessera/proxy/v1/CallCompletionResponse';
import { completionCallToWire, type CompletionCall, type CompletionCallAnswer } from './contract';
import { call } from './edge';
import { clientCredentials, tlsChannelOptions, type TlsMaterial } from './tls';
import { clientChannelOptions, createProxyClient, type ClientTuning } from './index';

/**
 * The proxy as the fields service may use it: CallCompletion and nothing else (the proxy's caller
 * policy lets the fields identity make only that call). The gRPC deadline is the exchange's own
 * plus `marginMs`, so the proxy's timeout, not the channel's, normally ends a slow merchant.
 */
export interface CompletionCalls {
  callCompletion(request: CompletionCall, ctx: { requestId: string }): Promise<CompletionCallAnswer>;
  close(): void;
}

export function completionCalls(client: ProxyClient, marginMs = 1000): CompletionCalls {
  return {
    async callCompletion(request, ctx) {
      const answer = await call<CallCompletionRequest, CallCompletionResponse__Output>(
        client,
        client.CallCompletion,
        completionCallToWire(request),
        { timeoutMs: request.timeoutMs + marginMs, requestId: ctx.requestId },
      );
      return { status: answer.status, body: answer.body };
    },
    close: () => client.close(),
  };
}

export interface ProxyChannelSettings {
  /** PROXY_ADDR: host:port, dns:///host:port or ipv4:a:p,b:q. */
  address: string;
  /** The caller's own mTLS identity; undefined: plaintext (development on loopback only). */
  tls: TlsMaterial | undefined;
  /** TLS_PEER_PROXY: the SAN the proxy's certificate must carry. */
  peerName: string;
  tuning: ClientTuning;
}

/** A proxy client balanced round_robin over every replica its target resolves to that reports SERVING. */
export function connectProxyClient(settings: ProxyChannelSettings): ProxyClient {
  return createProxyClient(settings.address, clientCredentials(settings.tls), {
    ...clientChannelOptions(settings.tuning),
    ...tlsChannelOptions(settings.tls, settings.peerName),
  });
}
