import type { RouteDocument } from './routeDocument';

/**
 * Where an inbound route is served (docs/proxies.md, "Inbound routes"): a path on INBOUND_PORT or a
 * host name. Each is held by one route of the whole deployment, so the inbound service can answer
 * "whose route is this request for" from the request alone, before it knows any merchant.
 */

/** An index field: `path:/checkout` or `host:pay.shop.example`. */
export type InboundAddress = `path:${string}` | `host:${string}`;

/** What an address points at in the index. */
export interface InboundOwner {
  merchantId: string;
  routeId: string;
}

/**
 * A route path as the index keeps it: without a trailing slash (`/checkout/` is `/checkout`), so
 * two spellings of one prefix cannot be held by two routes. `/` stays `/`.
 */
export function normalizeRoutePath(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** The address a route holds; undefined for an outbound route. */
export function inboundAddressOf(route: RouteDocument): InboundAddress | undefined {
  if (route.kind !== 'inbound' || route.inbound === undefined) return undefined;
  if (route.inbound.host !== undefined) return `host:${route.inbound.host.toLowerCase()}`;
  if (route.inbound.path !== undefined) return `path:${normalizeRoutePath(route.inbound.path)}`;
  return undefined;
}

/** A request's Host header as an index field: lower case, port and a trailing dot dropped; undefined when it has none. */
export function hostAddressOf(hostHeader: string | undefined): InboundAddress | undefined {
  if (hostHeader === undefined || hostHeader === '') return undefined;
  // `[::1]:8083` and `127.0.0.1:8083` are no route's host; `shop.example:8083` is `shop.example`.
  const host = hostHeader.startsWith('[') ? hostHeader : (hostHeader.split(':')[0] ?? '');
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === '' ? undefined : `host:${name}`;
}

/**
 * The path addresses that could serve `pathname`, longest first: `/a/b/c` → `/a/b/c`, `/a/b`,
 * `/a`, `/`. A route path matches at a segment boundary only (`/checkout` serves `/checkout/x`,
 * never `/checkouts`), and the longest that is held wins.
 */
export function pathAddressesOf(pathname: string): InboundAddress[] {
  const path = normalizeRoutePath(pathname);
  const out: InboundAddress[] = [];
  let current = path;
  for (;;) {
    out.push(`path:${current}`);
    if (current === '/') return out;
    const cut = current.lastIndexOf('/');
    current = cut <= 0 ? '/' : current.slice(0, cut);
  }
}

/**
 * The upstream URL of a request on a route: `upstream`, then the part of the request path after the
 * route's path (a host route: the whole path), then the request's query after the upstream's own.
 */
export function upstreamUrlOf(route: RouteDocument, requestPath: string, requestQuery: string): string {
  const inbound = route.inbound;
  if (inbound === undefined) throw new Error('not an inbound route');
  const url = new URL(inbound.upstream);
  const prefix = inbound.path === undefined ? '' : normalizeRoutePath(inbound.path);
  let rest = inbound.path === undefined ? requestPath : requestPath.slice(prefix === '/' ? 0 : prefix.length);
  // The route's own path (with or without its slash) is the upstream URL itself.
  if (rest === '/') rest = '';
  if (rest !== '') url.pathname = url.pathname.replace(/\/$/, '') + (rest.startsWith('/') ? rest : `/${rest}`);
  if (requestQuery !== '') url.search = url.search === '' ? requestQuery : `${url.search}&${requestQuery}`;
  return url.toString();
}
