import { TesseraError } from '@tessera/common';
import {
  findAliasCandidates,
  parseRouteDocument,
  rewriteBody,
  RouteDocumentError,
  type Place,
  type Replacement,
  type RouteDocument,
  type StoredField,
} from '@tessera/routes';
import type { TokenOwner } from '../domain/card';
import { keyModeOf } from '../domain/tokenMode';
import { LONGEST_CVV, type RenderableCard, type Vault } from './vault';

/**
 * RenderRoute (ADR 0013, point 3): the forward proxy's render. The outbound route's filters find
 * alias candidates in the request body (packages/routes, the same engine as the admin dry run);
 * each candidate that names a token of the merchant and mode (an alias of any format, or the
 * `tok.…` id) is replaced by the card data its filter's `store` names, encoded for its place.
 *
 * Which card fills which place (docs/routes.md, "Outbound: which card fills a place"):
 * - every place is filled from the card its own value names: a `number` place with that card's
 *   number, a `cvv` place with its CVV, and so on (the inbound route put the card's alias in each
 *   place it took card data from, the CVV's included);
 * - a value that names none of the merchant's tokens of this mode stays as it is (the merchant's
 *   own expiry, a literal, a real card number a text filter happened to find);
 * - several cards in one body are allowed (a batch of payouts), each number place with its own;
 *   but when the body has number places, a `cvv`, expiry or holder place must name one of their
 *   cards: a CVV of one card sent beside the number of another is refused (parameter_invalid,
 *   `body`), never rendered.
 *
 * The CVV follows Render's [CARD_CVV] rules: decrypted only when a place asks for it, taken (and
 * so consumed) once per card whatever the number of places that ask, and only after every
 * failure that does not depend on it (holder name missing, body too large, another card without
 * a CVV) has been raised, so a refused request burns none.
 */

export interface RenderRouteRequest {
  owner: TokenOwner;
  routeJson: string;
  contentType: string;
  body: Buffer;
}

export interface RenderedRoute {
  /** Holds card data: never log it. */
  body: Buffer;
  /** The tokens whose card data went into the body, once each, in order of first use (the audit's). */
  tokens: string[];
}

/**
 * The most distinct candidate values one request may have looked up: each is a keyed hash and a
 * store read (and a card opened when it names one), so a body of nothing but alias-shaped values
 * must not turn one call into tens of thousands. A request to a PSP carries a handful.
 */
export const MAX_ROUTE_CANDIDATES = 1000;

/** The outbound route the request names; parameter_invalid (param route_json) otherwise. */
export function outboundRouteOf(routeJson: string): RouteDocument {
  let value: unknown;
  try {
    value = JSON.parse(routeJson);
  } catch {
    throw new TesseraError('parameter_invalid', { param: 'route_json', message: 'route_json must be a route document as JSON.' });
  }
  let route: RouteDocument;
  try {
    route = parseRouteDocument(value);
  } catch (err) {
    if (!(err instanceof RouteDocumentError)) throw err;
    throw new TesseraError('parameter_invalid', { param: 'route_json', message: `route_json is not a valid route: ${err.message}` });
  }
  if (route.kind !== 'outbound') {
    throw new TesseraError('parameter_invalid', { param: 'route_json', message: 'RenderRoute runs outbound routes only.' });
  }
  return route;
}

/**
 * The body as the filter engine reads it. A body that is not UTF-8 (a file part of a multipart
 * upload) is read byte for byte as Latin-1, which keeps every byte it does not rewrite: aliases
 * and the card data put in their places are ASCII, except a holder name, which goes in as UTF-8.
 */
function decodeBody(body: Buffer): { text: string; encode: (text: string) => Buffer; asText: (value: string) => string } {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
    return { text, encode: (t) => Buffer.from(t, 'utf8'), asText: (v) => v };
  } catch {
    return {
      text: body.toString('latin1'),
      encode: (t) => Buffer.from(t, 'latin1'),
      asText: (v) => Buffer.from(v, 'utf8').toString('latin1'),
    };
  }
}

/** A number place may hold its alias grouped as a card number is (`4242 4242 …`): the index knows it without. */
function lookupValue(place: Place): string {
  return /^\d(?:[ -]?\d){11,18}$/.test(place.value) ? place.value.replace(/[ -]/g, '') : place.value;
}

function valueOf(store: StoredField, card: RenderableCard, cvv: string | undefined): string {
  const { values } = card;
  const month = String(values.expiryMonth).padStart(2, '0');
  const year = String(values.expiryYear).padStart(4, '0');
  switch (store) {
    case 'number':
      return values.number;
    case 'expiry_month':
      return month;
    case 'expiry_year':
      return year;
    case 'expiry':
      // The form printed on cards; a PSP that wants another one names month and year apart.
      return `${month}/${year.slice(-2)}`;
    case 'holder':
      if (values.holderName === undefined || values.holderName === '') throw new TesseraError('holder_name_unavailable');
      return values.holderName;
    case 'cvv':
      if (cvv === undefined || cvv === '') throw new TesseraError('cvv_unavailable');
      return cvv;
  }
}

export async function renderRoute(vault: Vault, request: RenderRouteRequest): Promise<RenderedRoute> {
  const route = outboundRouteOf(request.routeJson);
  const maxBytes = vault.renderMaxBytes;
  if (request.body.length > maxBytes) {
    throw new TesseraError('rendered_body_too_large', { param: 'body', message: `The body exceeds the limit of ${maxBytes} bytes.` });
  }
  const mode = keyModeOf(request.owner.mode);
  // The contract: an unknown mode renders nothing (no token of it exists).
  if (mode === undefined || request.owner.merchantId === '') return { body: request.body, tokens: [] };
  if (route.mode !== mode) {
    throw new TesseraError('parameter_invalid', {
      param: 'route_json',
      message: `The route is a ${route.mode} route; the key is ${mode}.`,
    });
  }
  const decoded = decodeBody(request.body);
  const routeRequest = { contentType: request.contentType, body: decoded.text };
  const places = findAliasCandidates(routeRequest, route.filters);
  if (places.length === 0) return { body: request.body, tokens: [] };

  // Each distinct value is looked up once, all at once (auto-pipelined).
  const distinct = [...new Set(places.map(lookupValue))];
  if (distinct.length > MAX_ROUTE_CANDIDATES) {
    throw new TesseraError('parameter_invalid', {
      param: 'body',
      message: `The route's filters find more than ${MAX_ROUTE_CANDIDATES} distinct values to look up in this body.`,
    });
  }
  const opened = await Promise.all(distinct.map((value) => vault.cardForRender(request.owner, value)));
  const cardOfValue = new Map(distinct.map((value, i) => [value, opened[i]]));
  const filled = places.flatMap((place) => {
    const card = cardOfValue.get(lookupValue(place));
    return card === undefined ? [] : [{ place, card }];
  });
  if (filled.length === 0) return { body: request.body, tokens: [] };

  const numberCards = new Set(filled.filter(({ place }) => place.store === 'number').map(({ card }) => card.token));
  if (numberCards.size > 0 && filled.some(({ place, card }) => place.store !== 'number' && !numberCards.has(card.token))) {
    throw new TesseraError('parameter_invalid', {
      param: 'body',
      message: 'A card field (CVV, expiry or holder) names another card than the card numbers of the request.',
    });
  }

  const cvvCards = [...new Map(filled.filter(({ place }) => place.store === 'cvv').map(({ card }) => [card.token, card])).values()];
  const build = (cvvs: ReadonlyMap<string, string | undefined>): string =>
    rewriteBody(
      routeRequest,
      filled.map(({ place, card }): Replacement => ({ place, text: decoded.asText(valueOf(place.store, card, cvvs.get(card.token))) })),
    );
  const checkSize = (text: string): void => {
    if (decoded.encode(text).length > maxBytes) {
      throw new TesseraError('rendered_body_too_large', {
        param: 'body',
        message: `With card data filled in, the body would exceed the limit of ${maxBytes} bytes.`,
      });
    }
  };
  // Every failure that does not depend on the CVVs first, with stand-ins of the longest CVV.
  checkSize(build(new Map(cvvCards.map((card) => [card.token, LONGEST_CVV]))));
  const present = await Promise.all(cvvCards.map((card) => card.hasCvv()));
  if (present.includes(false)) throw new TesseraError('cvv_unavailable');
  const cvvs = new Map<string, string | undefined>();
  for (const card of cvvCards) cvvs.set(card.token, await card.takeCvv());
  const tokens = [...new Set(filled.map(({ card }) => card.token))];
  return { body: decoded.encode(build(cvvs)), tokens };
}
