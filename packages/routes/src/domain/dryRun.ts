import { maskCardNumbers } from '@tessera/common';
import {
  findAliasCandidates,
  findCardData,
  findUnmatchedCardData,
  redactUnmatchedCardData,
  rewriteBody,
  type Place,
  type RouteRequest,
} from './filterEngine';
import type { AliasFormat, RouteDocument, StoredField } from './routeDocument';

/**
 * What a sample request becomes on a route, with no vault: placeholder aliases instead of real
 * ones, card data masked (first 6 and last 4 of a number at most). The answer of the admin API's
 * and the CLI's dry run, so it holds nothing a log or a screen may not.
 */

export interface DryRunPlace {
  filterIndex: number;
  store: StoredField;
  /** Inbound: the value stored, masked. Outbound: the alias found, masked the same way when it looks like a card number. */
  value: string;
  /** What is put in its place: a placeholder alias (inbound), a placeholder for card data (outbound), or `unchanged`. */
  becomes: string;
}

export interface DryRunResult {
  routeId: string;
  kind: RouteDocument['kind'];
  /**
   * `forwarded`: the request would go on (rewritten as `body`); `refused`: unmatched card data and
   * `unmatchedCardData: refuse`, or two different card numbers (one card per request).
   */
  outcome: 'forwarded' | 'refused';
  places: DryRunPlace[];
  /** Card-number-like runs outside every filter's places: refused, or redacted in `body`. */
  unmatchedCardData: number;
  /** The request body as it would leave, card data and aliases as placeholders; every card-number-like run masked. */
  body: string;
}

/** First 6 and last 4 of a card number; the length kept. */
export function maskCardNumber(digits: string): string {
  if (digits.length < 12) return '*'.repeat(digits.length);
  return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
}

/** How a stored value is shown: numbers first6/last4, CVVs never, holders by their initial. */
function maskStored(store: StoredField, value: string): string {
  if (store === 'number') return maskCardNumber(value.replace(/\D/g, ''));
  if (store === 'cvv') return '***';
  if (store === 'holder') return value === '' ? '' : `${value.slice(0, 1)}***`;
  return value;
}

/** A stand-in for the alias the vault would make, recognisably not one (and, for card formats, not Luhn-checked digits). */
export function placeholderAlias(format: AliasFormat, cardNumber: string): string {
  const digits = cardNumber.replace(/\D/g, '');
  if (format === 'card_bin_last4') return `${digits.slice(0, 6)}${'X'.repeat(Math.max(digits.length - 10, 0))}${digits.slice(-4)}`;
  if (format === 'card_last4') return `${'X'.repeat(Math.max(digits.length - 4, 0))}${digits.slice(-4)}`;
  if (format === 'uuid') return '00000000-0000-0000-0000-000000000000';
  return 'tok.dry_run_placeholder';
}

/** Inbound, what each place becomes: the number and the CVV an alias of the card; expiry and holder stay (stored as well). */
export function replacedInbound(store: StoredField): boolean {
  return store === 'number' || store === 'cvv';
}

const CARD_PLACEHOLDERS: Record<StoredField, string> = {
  number: '[CARD_NUMBER]',
  expiry_month: '[CARD_EXPIRY_MONTH]',
  expiry_year: '[CARD_EXPIRY_YEAR]',
  expiry: '[CARD_EXPIRY]',
  cvv: '[CARD_CVV]',
  holder: '[CARD_HOLDER]',
};

function inboundDryRun(route: RouteDocument, request: RouteRequest): DryRunResult {
  let working = request;
  let unmatched = findUnmatchedCardData(request, findCardData(request, route.filters)).length;
  let outcome: DryRunResult['outcome'] = 'forwarded';
  if (unmatched > 0) {
    const redacted = route.unmatchedCardData === 'redact' ? redactUnmatchedCardData(request, route.filters) : undefined;
    if (redacted === undefined) outcome = 'refused';
    else working = { ...request, body: redacted.body };
  }
  const found = findCardData(working, route.filters);
  const number = found.find((p) => p.store === 'number')?.value ?? '';
  // The inbound service refuses two different card numbers in one request (multiple_cards).
  if (new Set(found.filter((p) => p.store === 'number').map((p) => p.value.replace(/\D/g, ''))).size > 1) outcome = 'refused';
  const places = found.map((p: Place) => ({
    filterIndex: p.filterIndex,
    store: p.store,
    value: maskStored(p.store, p.value),
    becomes: replacedInbound(p.store) ? placeholderAlias(p.aliasFormat, number) : 'unchanged',
  }));
  const body = rewriteBody(
    working,
    found.filter((p) => replacedInbound(p.store)).map((p) => ({ place: p, text: placeholderAlias(p.aliasFormat, number) })),
  );
  if (outcome === 'refused') unmatched = Math.max(unmatched, 1);
  return { routeId: route.id, kind: route.kind, outcome, places, unmatchedCardData: unmatched, body: maskCardNumbers(body) };
}

function outboundDryRun(route: RouteDocument, request: RouteRequest): DryRunResult {
  const found = findAliasCandidates(request, route.filters);
  const places = found.map((p) => ({
    filterIndex: p.filterIndex,
    store: p.store,
    value: maskCardNumbers(p.value) === p.value ? p.value : maskCardNumber(p.value.replace(/\D/g, '')),
    becomes: CARD_PLACEHOLDERS[p.store],
  }));
  const body = rewriteBody(
    request,
    found.map((p) => ({ place: p, text: CARD_PLACEHOLDERS[p.store] })),
  );
  return { routeId: route.id, kind: route.kind, outcome: 'forwarded', places, unmatchedCardData: 0, body: maskCardNumbers(body) };
}

/** The dry run of `route` on a sample request. */
export function dryRunRoute(route: RouteDocument, request: RouteRequest): DryRunResult {
  return route.kind === 'inbound' ? inboundDryRun(route, request) : outboundDryRun(route, request);
}
