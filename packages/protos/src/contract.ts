/**
 * The requests and answers as the services' code reads them, and their wire forms. Domain code
 * keeps plain strings (mode "test"/"live", upper-case method, '' for a holder name or CVV not
 * given, hasBody + bodyTemplate); the wire has enums, proto3 `optional` and, for one release, the
 * previous release's fields beside their replacements (docs/operations.md, rolling upgrades). The
 * conversion happens here only, called by the clients and handlers at each service's edge, so the
 * rest of the code never sees an enum name or an unset optional.
 *
 * Most domain views keep the names callers imported before (`TokenizeRequest`, `TokenRef`...), so no
 * use case changed with the wire; the proxy call's are `ForwardCall` and `DryRunReport`, so that no
 * domain type goes by a generated wire type's name (`ForwardCall` once did).
 */
import type { Mode, Mode__Output } from './generated/tessera/common/v1/Mode';
import type { HttpMethod, HttpMethod__Output } from './generated/tessera/proxy/v1/HttpMethod';
import type { CallCompletionRequest, CallCompletionRequest__Output } from './generated/tessera/proxy/v1/CallCompletionRequest';
import type { DeliverWebhookRequest, DeliverWebhookRequest__Output } from './generated/tessera/proxy/v1/DeliverWebhookRequest';
import type { ForwardUpstreamRequest, ForwardUpstreamRequest__Output } from './generated/tessera/proxy/v1/ForwardUpstreamRequest';
import type {
  TokenizeRequest as WireTokenizeRequest,
  TokenizeRequest__Output as WireTokenizeRequestIn,
} from './generated/tessera/vault/v1/TokenizeRequest';
// GetToken, DeleteToken and RetainToken have one request message each, with the same fields (see
// vault.proto): GetToken's stands for the three.
import type {
  GetTokenRequest as WireTokenRef,
  GetTokenRequest__Output as WireTokenRefIn,
} from './generated/tessera/vault/v1/GetTokenRequest';
import type {
  RenderRequest as WireRenderRequest,
  RenderRequest__Output as WireRenderRequestIn,
} from './generated/tessera/vault/v1/RenderRequest';
import type {
  UpdateTokenRequest as WireUpdateTokenRequest,
  UpdateTokenRequest__Output,
} from './generated/tessera/vault/v1/UpdateTokenRequest';
import type { AttachCvvRequest as WireAttachCvvRequest, AttachCvvRequest__Output } from './generated/tessera/vault/v1/AttachCvvRequest';
import type {
  ForwardRequest as WireForwardRequest,
  ForwardRequest__Output as WireForwardRequestIn,
} from './generated/tessera/proxy/v1/ForwardRequest';
import type {
  DryRunResponse as WireDryRunResponse,
  DryRunResponse__Output as WireDryRunResponseIn,
} from './generated/tessera/proxy/v1/DryRunResponse';

// Each view is its wire message minus the wire-only fields, so a field added to the .proto reaches
// callers without a change here; the converters below spread what they do not convert. The
// previous release's string fields (`mode`, `method`, `hasBody`) are the domain's own names: when
// they leave the wire, the views keep them.

/**
 * A card to tokenize: holder name and CVV '' when not given. `provisional` (default false) is left
 * out by callers that tokenize on a merchant server's behalf: only browser tokenization sets it;
 * `dedupe` likewise, set by POST /v1/token only.
 */
export type TokenizeRequest = Omit<
  WireTokenizeRequestIn,
  'keyMode' | 'holderName' | 'cvv' | '_holderName' | '_cvv' | 'provisional' | 'dedupe' | '_provisionalTtlSeconds' | 'aliasFormats'
> & {
  holderName: string;
  cvv: string;
  provisional?: boolean;
  dedupe?: boolean;
  /** Alias formats to give the token (POST /v1/token's `aliasFormats`); absent or empty: none. */
  aliasFormats?: string[];
};

/** `mode` is the key's mode, "test" or "live"; anything else finds nothing, as before the enum. */
export type TokenRef = Omit<WireTokenRefIn, 'keyMode'>;

/** Render's and Preview's request (their wire messages have the same fields). */
export type RenderRequest = Omit<WireRenderRequestIn, 'keyMode'>;
/** On the wire the mode is the key_mode enum only (no deprecated string form). */
export type UpdateTokenRequest = Omit<UpdateTokenRequest__Output, 'keyMode'> & { mode: string };
/** `cvcSession` (the grant a CVC-only field attaches under) is sent by the fields service only. */
export type AttachCvvRequest = Omit<AttachCvvRequest__Output, 'keyMode' | 'cvcSession'> & { mode: string; cvcSession?: string };

/**
 * Forward's and DryRun's request (their wire messages have the same fields). `method` upper case
 * (the proxy refuses one it does not know); `bodyTemplate` only meaningful when `hasBody`.
 */
export type ForwardCall = Omit<WireForwardRequestIn, 'keyMode' | 'httpMethod' | 'bodyTemplate' | '_bodyTemplate'> & {
  bodyTemplate: string;
};

/** The destination error fields are '' when the destination is allowed. */
export type DryRunReport = Omit<
  WireDryRunResponseIn,
  'httpMethod' | 'destinationErrorCode' | 'destinationErrorMessage' | '_destinationErrorCode' | '_destinationErrorMessage'
> & { destinationErrorCode: string; destinationErrorMessage: string };

/** The wire forms, for the explicit type arguments of `call` (grpc-js's overloaded methods defeat inference). */
export type { WireTokenizeRequest, WireTokenRef, WireRenderRequest, WireForwardRequest, WireDryRunResponseIn as WireDryRunResponse };

const MODES: Record<string, Mode__Output> = { test: 'MODE_TEST', live: 'MODE_LIVE' };
const MODE_NAMES: Partial<Record<Mode__Output, string>> = { MODE_TEST: 'test', MODE_LIVE: 'live' };
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The key mode in both wire forms: the enum, and (for one release) the previous release's string. */
export function modeToWire(mode: string): { keyMode: Mode; mode: string } {
  return { keyMode: MODES[mode] ?? 'MODE_UNSPECIFIED', mode };
}

/**
 * The enum when set; else what a caller of the previous release sent ("" from older ones still,
 * and from messages that never had the string form).
 */
export function modeFromWire(message: { keyMode: Mode__Output; mode?: string }): string {
  return MODE_NAMES[message.keyMode] ?? message.mode ?? '';
}

function methodToWire(method: string): { httpMethod: HttpMethod; method: string } {
  const known = METHODS.find((m) => m === method.toUpperCase());
  return { httpMethod: known === undefined ? 'HTTP_METHOD_UNSPECIFIED' : `HTTP_METHOD_${known}`, method };
}

function methodFromWire(message: { httpMethod: HttpMethod__Output; method: string }): string {
  return message.httpMethod === 'HTTP_METHOD_UNSPECIFIED' ? message.method : message.httpMethod.slice('HTTP_METHOD_'.length);
}

/** '' (not given) is absent on the wire. */
const present = <K extends string>(key: K, value: string): Partial<Record<K, string>> =>
  (value === '' ? {} : { [key]: value }) as Partial<Record<K, string>>;

export function tokenizeRequestToWire({ holderName, cvv, provisional, ...rest }: TokenizeRequest): WireTokenizeRequest {
  return {
    ...rest,
    ...present('holderName', holderName),
    ...present('cvv', cvv),
    ...modeToWire(rest.mode),
    provisional: provisional === true,
  };
}

export function tokenizeRequestFromWire({
  keyMode,
  holderName,
  cvv,
  _holderName,
  _cvv,
  _provisionalTtlSeconds,
  ...rest
}: WireTokenizeRequestIn): TokenizeRequest {
  return { ...rest, holderName: holderName ?? '', cvv: cvv ?? '', mode: modeFromWire({ keyMode, mode: rest.mode }) };
}

export function updateTokenRequestToWire({ mode, ...rest }: UpdateTokenRequest): WireUpdateTokenRequest {
  return { ...rest, keyMode: modeToWire(mode).keyMode };
}

export function attachCvvRequestToWire({ mode, ...rest }: AttachCvvRequest): WireAttachCvvRequest {
  return { ...rest, keyMode: modeToWire(mode).keyMode };
}

export function tokenRefToWire(ref: TokenRef): WireTokenRef {
  return { ...ref, ...modeToWire(ref.mode) };
}

export function tokenRefFromWire({ keyMode, ...rest }: WireTokenRefIn): TokenRef {
  return { ...rest, mode: modeFromWire({ keyMode, mode: rest.mode }) };
}

export function renderRequestToWire(request: RenderRequest): WireRenderRequest {
  return { ...request, ...modeToWire(request.mode) };
}

export function renderRequestFromWire({ keyMode, ...rest }: WireRenderRequestIn): RenderRequest {
  return { ...rest, mode: modeFromWire({ keyMode, mode: rest.mode }) };
}

export function forwardRequestToWire({ bodyTemplate, ...rest }: ForwardCall): WireForwardRequest {
  return { ...rest, ...modeToWire(rest.mode), ...methodToWire(rest.method), ...(rest.hasBody ? { bodyTemplate } : {}) };
}

export function forwardRequestFromWire({ keyMode, httpMethod, bodyTemplate, _bodyTemplate, ...rest }: WireForwardRequestIn): ForwardCall {
  return {
    ...rest,
    mode: modeFromWire({ keyMode, mode: rest.mode }),
    method: methodFromWire({ httpMethod, method: rest.method }),
    // A caller of the previous release sends has_body, and no body_template when it is ''.
    bodyTemplate: bodyTemplate ?? '',
    hasBody: bodyTemplate !== undefined || rest.hasBody,
  };
}

export function dryRunResponseToWire({ destinationErrorCode, destinationErrorMessage, ...rest }: DryRunReport): WireDryRunResponse {
  return {
    ...rest,
    ...methodToWire(rest.method),
    ...present('destinationErrorCode', destinationErrorCode),
    ...present('destinationErrorMessage', destinationErrorMessage),
  };
}

export function dryRunResponseFromWire({
  httpMethod,
  destinationErrorCode,
  destinationErrorMessage,
  _destinationErrorCode,
  _destinationErrorMessage,
  ...rest
}: WireDryRunResponseIn): DryRunReport {
  return {
    ...rest,
    method: methodFromWire({ httpMethod, method: rest.method }),
    hasBody: rest.preview !== null || rest.hasBody,
    destinationErrorCode: destinationErrorCode ?? '',
    destinationErrorMessage: destinationErrorMessage ?? '',
  };
}

/** CallCompletion as its two sides use it: the key mode as "test" / "live", the body as bytes. */
export interface CompletionCall {
  merchantId: string;
  mode: string;
  url: string;
  headers: { name: string; value: string }[];
  body: Buffer;
  /** The whole exchange's deadline at the proxy (capped there by PSP_TIMEOUT_MS). */
  timeoutMs: number;
}

export interface CompletionCallAnswer {
  status: number;
  body: Buffer;
}

export function completionCallToWire(input: CompletionCall): CallCompletionRequest {
  return {
    merchantId: input.merchantId,
    keyMode: MODES[input.mode] ?? 'MODE_UNSPECIFIED',
    url: input.url,
    headers: input.headers,
    body: input.body,
    timeoutMs: input.timeoutMs,
  };
}

export function completionCallFromWire(wire: CallCompletionRequest__Output): CompletionCall {
  return {
    merchantId: wire.merchantId,
    mode: MODE_NAMES[wire.keyMode] ?? '',
    url: wire.url,
    headers: wire.headers,
    body: wire.body,
    timeoutMs: wire.timeoutMs,
  };
}

/** DeliverWebhook as its two sides use it: the same shape as a completion call, a different answer. */
export type WebhookDeliveryCall = CompletionCall;

export interface WebhookDeliveryAnswer {
  status: number;
  latencyMs: number;
}

export function webhookDeliveryToWire(input: WebhookDeliveryCall): DeliverWebhookRequest {
  return completionCallToWire(input);
}

export function webhookDeliveryFromWire(wire: DeliverWebhookRequest__Output): WebhookDeliveryCall {
  return completionCallFromWire(wire);
}

/** ForwardUpstream as its two sides use it: an inbound route's rewritten request, to the merchant's upstream. */
export interface UpstreamCall {
  /** For logs only, with routeId. */
  merchantId: string;
  routeId: string;
  /** "test" or "live" (live: https only); anything else is treated as live. */
  mode: string;
  /** As the client sent it, upper case: any token method but CONNECT and TRACE. */
  method: string;
  url: string;
  headers: { name: string; value: string }[];
  body: Buffer;
  /** Time to the upstream's head at the proxy, and then the longest silence within its body (capped there by PSP_TIMEOUT_MS; 0: PSP_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * The Luhn-valid aliases (card_bin_last4, card_last4) written into the body, each as written there:
   * the proxy's card-number check passes over these values only (see proxy.proto). Default none.
   */
  cardAliases?: string[];
}

export function upstreamCallToWire(input: UpstreamCall): ForwardUpstreamRequest {
  return {
    merchantId: input.merchantId,
    routeId: input.routeId,
    keyMode: MODES[input.mode] ?? 'MODE_UNSPECIFIED',
    method: input.method,
    url: input.url,
    headers: input.headers,
    body: input.body,
    timeoutMs: input.timeoutMs,
    cardAliases: input.cardAliases ?? [],
  };
}

export function upstreamCallFromWire(wire: ForwardUpstreamRequest__Output): UpstreamCall {
  return {
    merchantId: wire.merchantId,
    routeId: wire.routeId,
    mode: MODE_NAMES[wire.keyMode] ?? '',
    method: wire.method,
    url: wire.url,
    headers: wire.headers,
    body: wire.body,
    timeoutMs: wire.timeoutMs,
    cardAliases: wire.cardAliases,
  };
}
