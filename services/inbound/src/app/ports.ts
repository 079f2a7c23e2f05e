import type { Readiness, TokenizeRequest, TokenRecord__Output } from '@tessera/protos';
import type { InboundAddress, InboundOwner, StoredRoute } from '@tessera/routes';
import type { UpstreamHeader } from '../domain/forwardHeaders';

export type { UpstreamHeader };

/**
 * What the inbound service's use cases need from outside. The vault and the proxy are reached over
 * gRPC under the `inbound` identity, which their caller policies hold to one RPC each; Redis is
 * read-only for routes, and written only for the card-testing counters.
 */

export interface CallContext {
  requestId: string;
}

/** A card a route took: durable (the route is the merchant's consent), never deduplicated. */
export type RouteTokenize = Omit<TokenizeRequest, 'provisional' | 'dedupe' | 'provisionalTtlSeconds'>;

/** The vault as this identity may use it: make a token, ask readiness. */
export interface InboundVault {
  tokenize(request: RouteTokenize, ctx: CallContext): Promise<TokenRecord__Output>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<Readiness>;
  close(): void;
}

/** A rewritten request, card-free, for the merchant's upstream. */
export interface UpstreamRequest {
  merchantId: string;
  routeId: string;
  mode: 'test' | 'live';
  method: string;
  url: string;
  headers: UpstreamHeader[];
  body: Buffer;
  /**
   * The Luhn-valid aliases written into the body, as written: they look like card numbers by
   * design, and the proxy, which checks the body again for card numbers, passes over these only.
   */
  cardAliases: string[];
}

/** The upstream's answer as it arrives: status and headers first, then the body's chunks. */
export interface UpstreamAnswer {
  status: number;
  headers: UpstreamHeader[];
  body: AsyncIterable<Buffer>;
}

/**
 * The proxy's ForwardUpstream (ADR 0013): the only way this service reaches an upstream, which it
 * has no network route to. Rejects with a TesseraError (psp_unreachable, psp_timeout,
 * psp_destination_forbidden, …) when no answer began; `signal` cancels the call.
 */
export interface UpstreamForwarder {
  forward(request: UpstreamRequest, ctx: CallContext & { signal: AbortSignal }): Promise<UpstreamAnswer>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<Readiness>;
  close(): void;
}

/** Which route serves an address, and the route: read from the index and the merchants' routes. */
export interface InboundRouteReader {
  ownerOf(address: InboundAddress): Promise<InboundOwner | undefined>;
  route(owner: InboundOwner): Promise<StoredRoute | undefined>;
}

/** The card-testing limits (app/cardTesting.ts); a refusal is a TesseraError to answer. */
export interface CardTestingGuard {
  /** One request with a card on `route` from `clientIp`: refused past the route's or the address's rate. */
  admitRequest(owner: InboundOwner, clientIp: string | undefined, requestId: string): Promise<void>;
  /** The card itself: refused when it is a new one past the address's distinct cards of the hour. */
  admitCard(number: string, clientIp: string | undefined, requestId: string): Promise<void>;
}
