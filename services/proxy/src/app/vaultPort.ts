import type { ForwardCall, PreviewResponse__Output, RenderRouteCall } from '@tessera/protos';
import { findContentType, type HeaderEntry } from '../domain/headers';

export interface RenderInput {
  merchantId: string;
  /** The calling key's mode as the gateway sent it; the vault renders only tokens of that mode. */
  mode: string;
  token: string;
  template: string;
  contentType: string;
}

/**
 * The proxy's view of the vault: render a body, and say whether the vault is up. Defined here,
 * where the use cases need it; transport/vaultClient.ts implements it over gRPC.
 */
export interface VaultPort {
  render(input: RenderInput, requestId?: string): Promise<Buffer>;
  /** The masked render of a dry run: no clear card data in the answer. */
  preview(input: RenderInput, requestId?: string): Promise<PreviewResponse__Output>;
  /** The forward proxy's render: the aliases the route's filters find, and the tokens behind those that were filled in. */
  renderRoute(input: RenderRouteCall, requestId?: string): Promise<{ body: Buffer; tokens: string[] }>;
  ready(): Promise<{ ready: boolean; detail: string }>;
  close(): void;
}

/** What Forward and DryRun ask the vault to fill in, or undefined when the request has no body. */
export function renderInputOf(input: ForwardCall, headers: readonly HeaderEntry[]): RenderInput | undefined {
  if (!input.hasBody) return undefined;
  return {
    merchantId: input.merchantId,
    // As sent, not parseMode's reading: an unknown mode must find no token, not become live.
    mode: input.mode,
    token: input.token,
    template: input.bodyTemplate,
    contentType: findContentType(headers),
  };
}
