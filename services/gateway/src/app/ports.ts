import type {
  DryRunReport,
  ForwardCall,
  ForwardRouteAnswer,
  ForwardRouteCall,
  ForwardResponse__Output,
  Readiness,
  VaultCalls,
  WebhookDeliveryAnswer,
  WebhookDeliveryCall,
} from '@tessera/protos';
import type { EventRecord, EventStore, WebhookEndpointStore } from '@tessera/merchant-data';

/**
 * The vault and the proxy as the gateway's use cases see them. The gRPC adapters that implement
 * them live in transport/upstreams.ts; the stores the use cases need (detokenization log, merchant
 * settings, form and CVC sessions) are the store/ interfaces themselves.
 */

export interface CallContext {
  requestId: string;
}

/**
 * What the gateway needs from the vault: every token operation a secret key may ask for, as the
 * shared gRPC calls make them (@tessera/protos vaultCalls, which documents each). Failures reject
 * with a TesseraError (a peer's own error, or 503 when it is down, hung or too slow: see callError),
 * so use cases never see raw gRPC errors.
 */
export type VaultApi = VaultCalls;

export interface ProxyApi {
  forward(request: ForwardCall, ctx: CallContext): Promise<ForwardResponse__Output>;
  /** The checks of forward and a masked preview of the body; nothing is sent. */
  dryRun(request: ForwardCall, ctx: CallContext): Promise<DryRunReport>;
  /** A request taken off a forward-proxy tunnel, sent under its outbound route (ForwardRoute). */
  forwardRoute(request: ForwardRouteCall, ctx: CallContext): Promise<ForwardRouteAnswer>;
  ready(ctx: CallContext & { timeoutMs: number }): Promise<Readiness>;
  close(): void;
}

/**
 * Where the gateway's use cases record what happened for the merchant (issue 27); implemented by
 * RedisEventStore (@tessera/merchant-data). Rejects when the record was not kept.
 */
export interface EventRecorder {
  record(event: EventRecord): Promise<void>;
}

/** The merchant's events as GET /v1/events reads them (RedisEventStore). */
export type EventReader = Pick<EventStore, 'get' | 'list'>;

/** The merchant's webhook endpoints (RedisWebhookEndpointStore); delivery reads them elsewhere. */
export type WebhookEndpoints = Pick<WebhookEndpointStore, 'create' | 'get' | 'list' | 'delete' | 'rotateSecret'>;

/**
 * The proxy's DeliverWebhook as the webhook dispatcher sees it: one POST of a signed event to a
 * merchant's endpoint through the proxy's egress (the only way out). Rejects with a TesseraError:
 * psp_timeout, psp_unreachable, psp_destination_forbidden from the proxy; 503 when the proxy is down.
 */
export interface WebhookSender {
  deliverWebhook(request: WebhookDeliveryCall, ctx: CallContext): Promise<WebhookDeliveryAnswer>;
}

/**
 * The vault's part in the forward proxy (ADR 0013): leaf certificates for the hosts of a merchant's
 * outbound routes, signed by the merchant's CA, whose key never leaves the vault; and that CA's
 * certificate for the merchant to trust.
 */
export interface ForwardProxyVault {
  /** `publicKeySpki`: DER SubjectPublicKeyInfo of a key the gateway made. Rejects proxy_route_not_found for a host on no route. */
  issueHostCertificate(
    request: { merchantId: string; host: string; publicKeySpki: Buffer },
    ctx: CallContext,
  ): Promise<{ certificateChainPem: string; notAfter: Date }>;
  caCertificatePem(merchantId: string, ctx: CallContext): Promise<string>;
}
