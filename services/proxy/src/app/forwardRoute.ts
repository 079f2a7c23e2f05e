import type { ForwardRouteAnswer, ForwardRouteCall } from '@tessera/protos';
import { findContentType } from '../domain/headers';
import { outboundHostsOf } from '../domain/routeHosts';
import { sendCheckedExchange, type ForwardContext, type ForwardDeps } from './forward';
import type { VaultPort } from './vaultPort';

export interface ForwardRouteDeps extends Omit<ForwardDeps, 'vault'> {
  vault: Pick<VaultPort, 'renderRoute'>;
}

/**
 * The forward proxy's call (ADR 0013): a merchant's request taken off its CONNECT tunnel by the
 * gateway, sent as Forward's would be (sendCheckedExchange: method, destination policy with the
 * route's outbound hosts as the allowlist, https only for live keys, pre-flight, header
 * filtering, the addresses pinned), with the aliases the route's filters find replaced by the
 * vault's RenderRoute. An empty body is sent as none, without asking the vault.
 */
export async function forwardRoute(deps: ForwardRouteDeps, input: ForwardRouteCall, ctx: ForwardContext = {}): Promise<ForwardRouteAnswer> {
  const allowedHosts = outboundHostsOf(input.routeJson);
  const res = await sendCheckedExchange(
    deps,
    { ...input, allowedHosts },
    async (headers) => {
      if (input.body.length === 0) return { body: undefined, extra: [] as string[] };
      const rendered = await deps.vault.renderRoute(
        {
          merchantId: input.merchantId,
          // As sent: an unknown mode must find no alias, not become live.
          mode: input.mode,
          routeJson: input.routeJson,
          contentType: findContentType(headers),
          body: input.body,
        },
        ctx.requestId,
      );
      return { body: rendered.body, extra: rendered.tokens };
    },
    ctx,
  );
  return { status: res.status, headers: res.headers, body: res.body, pspMs: res.pspMs, tokens: res.extra };
}
