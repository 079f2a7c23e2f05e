import { hostMatchesPatterns, TesseraError, type Logger } from '@tessera/common';
import type { ForwardRouteAnswer } from '@tessera/protos';
import type { ApiKeyRecord, DetokenizationLog, ProxyCallFacts } from '@tessera/merchant-data';
import type { RouteDocument, RouteReader } from '@tessera/routes';
import type { ProxyApi } from './ports';
import { recordDetokenization } from './proxyCall';

/**
 * The forward proxy's use cases (docs/proxies.md, ADR 0013): which outbound route opens a host for
 * a key, and one request taken off a tunnel, sent by the proxy under that route (ForwardRoute:
 * destination policy, the vault's RenderRoute, the PSP) and audited like /v1/proxy, whose card
 * data it asks for. The gateway sees the merchant's request (aliases, PSP credentials) and the
 * PSP's answer, never card data.
 */

export interface ForwardProxyDeps {
  routes: RouteReader;
  proxy: Pick<ProxyApi, 'forwardRoute'>;
  logger: Logger;
  detokenizations?: DetokenizationLog | undefined;
}

export type ForwardProxyKey = Pick<ApiKeyRecord, 'id' | 'merchantId' | 'mode'>;

/**
 * The merchant's first outbound route (by id) of the key's mode whose hosts name `host`, or
 * undefined. Read on every CONNECT and every request in a tunnel: a route deleted or changed
 * takes effect on the next request, as a revoked key does.
 */
export async function outboundRouteFor(routes: RouteReader, key: ForwardProxyKey, host: string): Promise<RouteDocument | undefined> {
  const stored = await routes.list(key.merchantId);
  return stored
    .map((s) => s.route)
    .find((route) => route.kind === 'outbound' && route.mode === key.mode && hostMatchesPatterns(host, route.outbound?.hosts ?? []));
}

export interface TunnelRequest {
  key: ForwardProxyKey;
  requestId: string;
  route: RouteDocument;
  method: string;
  /** https://<CONNECT host>[:port]<path and query> */
  url: string;
  /** Proxy-*, Host and hop-by-hop headers already removed. */
  headers: { name: string; value: string }[];
  body: Buffer;
  /** Told the call as sent, for the request log; the PSP's status and time are filled in when it answers. */
  noteCall?: (call: ProxyCallFacts) => void;
}

/** Where forward-proxy requests are filed in the request log and the audit (a route pattern, as /v1's are). */
export const FORWARD_PROXY_ROUTE = '/forward-proxy';

/**
 * One request from a tunnel: sent by the proxy, then audited, one entry per token whose card data
 * went out (one without a token when none did or the call failed before the vault answered), so
 * the audit shows every call. The request log keeps no body: it is the merchant's own request,
 * not a template of theirs.
 */
export async function sendTunnelRequest(deps: ForwardProxyDeps, request: TunnelRequest): Promise<ForwardRouteAnswer> {
  const call: ProxyCallFacts = {
    pspUrl: request.url,
    method: request.method,
    token: '',
    bodyTemplate: null,
    headerNames: request.headers.map((h) => h.name),
    pspStatus: null,
    pspMs: null,
  };
  request.noteCall?.(call);
  const audit = (tokens: readonly string[], status: number, code: string | null): void => {
    for (const token of tokens.length > 0 ? tokens : ['']) {
      recordDetokenization(deps, {
        requestId: request.requestId,
        route: FORWARD_PROXY_ROUTE,
        merchantId: request.key.merchantId,
        keyId: request.key.id,
        token,
        pspUrl: request.url,
        method: request.method,
        status,
        code,
      });
    }
  };
  let answer: ForwardRouteAnswer;
  try {
    answer = await deps.proxy.forwardRoute(
      {
        merchantId: request.key.merchantId,
        mode: request.key.mode,
        routeJson: JSON.stringify(request.route),
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.body,
      },
      { requestId: request.requestId },
    );
  } catch (err) {
    const error = err instanceof TesseraError ? err : new TesseraError('internal_error', { cause: err });
    audit([], error.status, error.code);
    throw err;
  }
  audit(answer.tokens, answer.status, null);
  call.token = answer.tokens.join(',');
  call.pspStatus = answer.status;
  call.pspMs = answer.pspMs;
  return answer;
}
