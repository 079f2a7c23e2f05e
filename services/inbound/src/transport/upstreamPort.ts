import { forwardUpstream, PROXY_SERVICE_NAME, readinessOverChannel, type ProxyClient } from '@tessera/protos';
import type { UpstreamForwarder } from '../app/ports';

/**
 * The proxy's ForwardUpstream (@tessera/protos' forwardUpstream) as this service's port. The
 * proxy's caller policy lets the inbound identity make this call and ask readiness, nothing else.
 * `timeoutMs`: the wait for the upstream's head and the longest silence in its body (the proxy caps it).
 */
export function upstreamOver(client: ProxyClient, timeoutMs: number): UpstreamForwarder {
  return {
    forward: (request, ctx) => forwardUpstream(client, { ...request, timeoutMs }, { requestId: ctx.requestId, signal: ctx.signal }),
    ready: readinessOverChannel(client, PROXY_SERVICE_NAME, 'proxy'),
    close: () => client.close(),
  };
}
