import { TesseraError } from '@tessera/common';
import {
  findCardData,
  findUnmatchedCardData,
  hostAddressOf,
  inboundAddressOf,
  pathAddressesOf,
  redactUnmatchedCardData,
  rewriteBody,
  upstreamUrlOf,
  type InboundAddress,
  type InboundOwner,
  type RouteDocument,
  type RouteRequest,
} from '@tessera/routes';
import { aliasFormatsOf, aliasReplacements, cardOfPlaces } from '../domain/inboundCard';
import { decodeBody, encodeBody } from '../domain/bodyText';
import { upstreamRequestHeaders } from '../domain/forwardHeaders';
import type { CardTestingGuard, InboundRouteReader, InboundVault, UpstreamAnswer, UpstreamForwarder, UpstreamHeader } from './ports';

/**
 * The inbound use case (docs/proxies.md, "Inbound routes"), in this order: find the route; find the
 * card data its filters name and any they do not (refused or redacted, as the route says); admit the
 * card past the card-testing limits; store it (one Tokenize, with the route's alias formats); put
 * the aliases in its places; send the request upstream through the proxy; hand back its answer.
 * Nothing reaches the upstream before every check passed, and a request that holds no card data
 * is sent on byte for byte.
 */

export interface InboundRequest {
  method: string;
  /** The request target's path, as sent (percent-encoded). */
  path: string;
  /** The query without its `?`, as sent; '' when none. */
  query: string;
  host: string | undefined;
  headers: UpstreamHeader[];
  body: Buffer;
  clientIp: string | undefined;
  /** Whether the sender reached Tessera over TLS (the load balancer's), for X-Forwarded-Proto. */
  proto: 'http' | 'https';
  requestId: string;
  signal: AbortSignal;
}

/** The alias formats that look like card numbers (and pass Luhn) by design. */
const LUHN_VALID_FORMATS = new Set(['card_bin_last4', 'card_last4']);

export interface InboundDeps {
  routes: InboundRouteReader;
  vault: Pick<InboundVault, 'tokenize'>;
  upstream: Pick<UpstreamForwarder, 'forward'>;
  cardTesting: CardTestingGuard;
  now: () => Date;
}

/** What happened, for the request log and the metrics: never a card, an alias or a path. */
export type InboundOutcome = 'forwarded' | 'forwarded_card' | 'forwarded_redacted';

export interface InboundResult {
  owner: InboundOwner;
  outcome: InboundOutcome;
  answer: UpstreamAnswer;
}

/** The route serving `address`, if its holder's route still serves it (an index entry may outlive a change for an instant). */
async function routeAt(
  routes: InboundRouteReader,
  address: InboundAddress,
): Promise<{ owner: InboundOwner; route: RouteDocument } | undefined> {
  const owner = await routes.ownerOf(address);
  if (owner === undefined) return undefined;
  const stored = await routes.route(owner);
  if (stored === undefined || inboundAddressOf(stored.route) !== address) return undefined;
  return { owner, route: stored.route };
}

/** A host route by the Host header first (its own name), else the longest route path that prefixes the request's. */
export async function resolveRoute(
  routes: InboundRouteReader,
  host: string | undefined,
  path: string,
): Promise<{ owner: InboundOwner; route: RouteDocument }> {
  const byHost = hostAddressOf(host);
  if (byHost !== undefined) {
    const found = await routeAt(routes, byHost);
    if (found !== undefined) return found;
  }
  for (const address of pathAddressesOf(path)) {
    const found = await routeAt(routes, address);
    if (found !== undefined) return found;
  }
  throw new TesseraError('route_not_found', { message: 'No inbound route is served at this path or host.' });
}

/**
 * The query string is where a GET form puts its fields: card data there is judged like unmatched
 * card data in the body (no filter names query places). A path with card data is always refused:
 * there is no place in it an alias could stand for.
 */
function checkedQuery(route: RouteDocument, path: string, query: string): string {
  if (findUnmatchedCardData({ contentType: 'text/plain', body: decodeURIComponentSafe(path) }, []).length > 0) {
    throw new TesseraError('card_data_unmatched', { param: 'path' });
  }
  const asForm: RouteRequest = { contentType: 'application/x-www-form-urlencoded', body: query };
  if (query === '' || findUnmatchedCardData(asForm, []).length === 0) return query;
  const redacted = route.unmatchedCardData === 'redact' ? redactUnmatchedCardData(asForm, []) : undefined;
  if (redacted === undefined) throw new TesseraError('card_data_unmatched', { param: 'query' });
  return redacted.body;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function contentTypeOf(headers: readonly UpstreamHeader[]): string | undefined {
  return headers.find((h) => h.name.toLowerCase() === 'content-type')?.value;
}

/**
 * `.` and `..` segments (or their percent-encodings) are refused: the upstream URL would resolve
 * them, and `/checkout/../admin` would leave the route's path for another of the upstream's.
 */
function checkPath(path: string): void {
  if (path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment))) {
    throw new TesseraError('invalid_request', { param: 'path', message: 'The path may not hold "." or ".." segments.' });
  }
}

export async function serveInbound(deps: InboundDeps, request: InboundRequest): Promise<InboundResult> {
  checkPath(request.path);
  const { owner, route } = await resolveRoute(deps.routes, request.host, request.path);
  const query = checkedQuery(route, request.path, request.query);
  let body = request.body;
  let outcome: InboundOutcome = query === request.query ? 'forwarded' : 'forwarded_redacted';
  const cardAliases: string[] = [];
  if (body.length > 0) {
    const { text, encoding } = decodeBody(body);
    let working: RouteRequest = { contentType: contentTypeOf(request.headers), body: text };
    let places = findCardData(working, route.filters);
    if (findUnmatchedCardData(working, places).length > 0) {
      const redacted = route.unmatchedCardData === 'redact' ? redactUnmatchedCardData(working, route.filters) : undefined;
      if (redacted === undefined) throw new TesseraError('card_data_unmatched', { param: 'body' });
      working = { ...working, body: redacted.body };
      places = findCardData(working, route.filters);
      outcome = 'forwarded_redacted';
    }
    const card = cardOfPlaces(places, route.mode, deps.now());
    if (card !== undefined) {
      await deps.cardTesting.admitRequest(owner, request.clientIp, request.requestId);
      await deps.cardTesting.admitCard(card.number, request.clientIp, request.requestId);
      const record = await deps.vault.tokenize(
        {
          merchantId: owner.merchantId,
          mode: route.mode,
          number: card.number,
          holderName: card.holderName ?? '',
          expiryMonth: card.expiryMonth,
          expiryYear: card.expiryYear,
          cvv: card.cvv ?? '',
          aliasFormats: aliasFormatsOf(places),
        },
        { requestId: request.requestId },
      );
      const replacements = aliasReplacements(places, record.token, record.aliases ?? {});
      for (const { place, text } of replacements) if (LUHN_VALID_FORMATS.has(place.aliasFormat)) cardAliases.push(text);
      working = { ...working, body: rewriteBody(working, replacements) };
      outcome = 'forwarded_card';
    }
    if (working.body !== text) body = encodeBody(working.body, encoding);
  }
  const answer = await deps.upstream.forward(
    {
      merchantId: owner.merchantId,
      routeId: route.id,
      mode: route.mode,
      method: request.method,
      url: upstreamUrlOf(route, request.path, query),
      headers: upstreamRequestHeaders(request.headers, { clientIp: request.clientIp, host: request.host, proto: request.proto }),
      body,
      cardAliases,
    },
    { requestId: request.requestId, signal: request.signal },
  );
  return { owner, outcome, answer };
}
