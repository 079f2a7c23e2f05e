/**
 * The forward proxy's calls (docs/proxies.md, ADR 0013) as the services' code reads them, and their
 * wire forms: the gateway's ForwardRoute to the proxy, the proxy's RenderRoute to the vault, the
 * gateway's IssueHostCertificate and GetCaCertificate to the vault. As in contract.ts, domain code
 * keeps the mode as "test"/"live"; the enum exists on the wire only.
 */
import type { ForwardRouteRequest, ForwardRouteRequest__Output } from './generated/tessera/proxy/v1/ForwardRouteRequest';
import type { ForwardRouteResponse, ForwardRouteResponse__Output } from './generated/tessera/proxy/v1/ForwardRouteResponse';
import type { RenderRouteRequest } from './generated/tessera/vault/v1/RenderRouteRequest';
import { modeFromWire, modeToWire } from './contract';

export type { ForwardRouteResponse__Output } from './generated/tessera/proxy/v1/ForwardRouteResponse';
export type { RenderRouteResponse__Output } from './generated/tessera/vault/v1/RenderRouteResponse';
export type { IssueHostCertificateResponse__Output } from './generated/tessera/vault/v1/IssueHostCertificateResponse';
export type { IssueHostCertificateRequest } from './generated/tessera/vault/v1/IssueHostCertificateRequest';
export type { GetCaCertificateRequest } from './generated/tessera/vault/v1/GetCaCertificateRequest';
export type { GetCaCertificateResponse__Output } from './generated/tessera/vault/v1/GetCaCertificateResponse';
export type { RenderRouteRequest } from './generated/tessera/vault/v1/RenderRouteRequest';

/** A request taken off a forward-proxy tunnel, for the proxy to send under the route. */
export interface ForwardRouteCall {
  merchantId: string;
  /** The key's mode, "test" or "live". */
  mode: string;
  /** The outbound route (a RouteDocument) as JSON. */
  routeJson: string;
  /** Upper case, as the client sent it. */
  method: string;
  /** https://<CONNECT host>[:port]<path and query> */
  url: string;
  headers: { name: string; value: string }[];
  body: Buffer;
}

/** The PSP's answer and the tokens whose card data went into the request. */
export type ForwardRouteAnswer = ForwardRouteResponse__Output;

export function forwardRouteToWire({ mode, ...rest }: ForwardRouteCall): ForwardRouteRequest {
  return { ...rest, keyMode: modeToWire(mode).keyMode };
}

export function forwardRouteFromWire({ keyMode, ...rest }: ForwardRouteRequest__Output): ForwardRouteCall {
  return { ...rest, mode: modeFromWire({ keyMode }) };
}

export function forwardRouteAnswerToWire(answer: ForwardRouteAnswer): ForwardRouteResponse {
  return answer;
}

/** What the proxy asks the vault to fill in: the body and the route whose filters find the aliases. */
export interface RenderRouteCall {
  merchantId: string;
  mode: string;
  routeJson: string;
  contentType: string;
  body: Buffer;
}

export function renderRouteToWire({ mode, ...rest }: RenderRouteCall): RenderRouteRequest {
  return { ...rest, keyMode: modeToWire(mode).keyMode };
}
