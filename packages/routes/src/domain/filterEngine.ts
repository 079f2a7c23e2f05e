import { findCardNumberRuns, isLuhnValid } from '@tessera/common';
import { applyEdits, encodeFor, parseBody, viewsOf, type Edit, type ParsedBody, type Segment, type View } from './bodySegments';
import type { AliasFormat, RouteFilter, StoredField } from './routeDocument';

/**
 * The filter engine: where a route's filters find card data (inbound) or aliases (outbound) in a
 * request body, how the body is rewritten with what the caller puts there, and what card data no
 * filter names. Pure: the caller (the inbound service, the vault, the admin dry run) tokenizes,
 * resolves and decides.
 */

export interface RouteRequest {
  contentType?: string | undefined;
  /** The body as text (UTF-8 decoded by the caller). */
  body: string;
}

/** A place a filter names: its raw range in the body and its decoded value. */
export interface Place {
  filterIndex: number;
  store: StoredField;
  aliasFormat: AliasFormat;
  /** Decoded: a card number's digits only (text filters), a JSON string's value, a form value. */
  value: string;
  start: number;
  end: number;
  segmentKind: Segment['kind'];
}

/** Raw [start, end) of card-number-like data. */
export interface Range {
  start: number;
  end: number;
}

/**
 * A card number as a text filter takes it: 12-19 digits, single spaces or hyphens between them,
 * no digit (or grouped digit) right before or after, Luhn-valid.
 */
const CARD_NUMBER_PATTERN = /(?<!\d[ -]?)\d(?:[ -]?\d){11,18}(?![ -]?\d)/g;
const TOKEN_PATTERN = /(?<![A-Za-z0-9_.-])tok\.[A-Za-z0-9_-]{16,128}(?![A-Za-z0-9_-])/g;
const UUID_PATTERN = /(?<![0-9A-Fa-f-])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f-])/g;

function rawRangeOf(view: View, from: number, to: number): Range {
  return { start: view.rawStart[from]!, end: view.rawEnd[to - 1]! };
}

/** The segments a text filter reads (form names are not values). */
function valueSegments(parsed: ParsedBody): Segment[] {
  return parsed.segments.filter((s) => s.kind !== 'form-name');
}

/** Matches of `pattern` in every value segment, as places; a number token is taken whole. */
function patternPlaces(
  parsed: ParsedBody,
  filter: RouteFilter,
  filterIndex: number,
  pattern: RegExp,
  accept: (match: string) => boolean,
): Place[] {
  const places: Place[] = [];
  for (const segment of valueSegments(parsed)) {
    for (const match of segment.view.text.matchAll(pattern)) {
      if (!accept(match[0])) continue;
      const range =
        segment.kind === 'json-number'
          ? { start: segment.start, end: segment.end }
          : rawRangeOf(segment.view, match.index, match.index + match[0].length);
      places.push({
        filterIndex,
        store: filter.store,
        aliasFormat: filter.aliasFormat,
        value: match[0],
        ...range,
        segmentKind: segment.kind,
      });
    }
  }
  return places;
}

const digitsOnly = (text: string): string => text.replace(/[ -]/g, '');

function cardNumberPlaces(parsed: ParsedBody, filter: RouteFilter, filterIndex: number): Place[] {
  return patternPlaces(parsed, filter, filterIndex, CARD_NUMBER_PATTERN, (m) => isLuhnValid(digitsOnly(m))).map((p) => ({
    ...p,
    value: digitsOnly(p.value),
  }));
}

/** The places a json or form filter names: every JSON value at the pointer, every value of the form field. */
function namedPlaces(parsed: ParsedBody, filter: RouteFilter, filterIndex: number): Place[] {
  const matches = parsed.segments.filter((s) =>
    filter.location === 'json'
      ? parsed.kind === 'json' && s.pointer === filter.pointer
      : filter.location === 'form' && parsed.kind === 'form' && s.kind === 'form-value' && s.field === filter.field,
  );
  return matches.map((s) => ({
    filterIndex,
    store: filter.store,
    aliasFormat: filter.aliasFormat,
    value: s.view.text,
    start: s.start,
    end: s.end,
    segmentKind: s.kind,
  }));
}

/**
 * Drops places that overlap an earlier one: a number named by a pointer is not found again by a
 * text filter. Linear in the body: places found by one filter never overlap each other.
 */
function withoutOverlaps(places: Place[], bodyLength: number): Place[] {
  const taken = new Uint8Array(bodyLength + 1);
  const kept: Place[] = [];
  for (const place of places) {
    let free = true;
    for (let i = place.start; i < place.end && free; i++) free = taken[i] === 0;
    if (!free) continue;
    taken.fill(1, place.start, place.end);
    kept.push(place);
  }
  return kept;
}

/** Per raw position, how many positions before it a place covers: "does [a, b) touch a place" in O(1). */
function coveredBefore(places: readonly Pick<Place, 'start' | 'end'>[], bodyLength: number): Int32Array {
  const covered = new Uint8Array(bodyLength);
  for (const p of places) covered.fill(1, p.start, p.end);
  const prefix = new Int32Array(bodyLength + 1);
  for (let i = 0; i < bodyLength; i++) prefix[i + 1] = prefix[i]! + covered[i]!;
  return prefix;
}

/** The first index whose value in a non-decreasing array is above `value` (its length when none is). */
function firstAbove(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid]! > value) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * Inbound: the card data the filters name, in filter order. Named places first (pointers and form
 * fields), then what text filters find elsewhere.
 */
export function findCardData(request: RouteRequest, filters: readonly RouteFilter[]): Place[] {
  const parsed = parseBody(request.contentType, request.body);
  return findCardDataIn(parsed, filters);
}

function findCardDataIn(parsed: ParsedBody, filters: readonly RouteFilter[]): Place[] {
  const named = filters.flatMap((f, i) => (f.location === 'text' ? [] : namedPlaces(parsed, f, i)));
  const found = filters.flatMap((f, i) => (f.location === 'text' ? cardNumberPlaces(parsed, f, i) : []));
  return withoutOverlaps([...named, ...found], parsed.body.length);
}

/**
 * Outbound: where the filters find aliases. A json or form filter takes the value at its place as
 * a candidate; a text filter looks for the shape of its alias format. The vault decides which
 * candidates are aliases of the merchant's cards; the others stay as they are.
 */
export function findAliasCandidates(request: RouteRequest, filters: readonly RouteFilter[]): Place[] {
  const parsed = parseBody(request.contentType, request.body);
  const named = filters.flatMap((f, i) => (f.location === 'text' ? [] : namedPlaces(parsed, f, i).filter((p) => p.value !== '')));
  const text = filters.map((f, i) => [f, i] as const).filter(([f]) => f.location === 'text');
  // Tokens and UUIDs first, whatever the filters' order: their digits can hold a Luhn-valid run of
  // 12 or more ("12345678-1234-…"), which a card-number filter would otherwise take from inside them.
  const patterned = text.flatMap(([f, i]) =>
    f.aliasFormat === 'token'
      ? patternPlaces(parsed, f, i, TOKEN_PATTERN, () => true)
      : f.aliasFormat === 'uuid'
        ? patternPlaces(parsed, f, i, UUID_PATTERN, () => true)
        : [],
  );
  const numbers = text.flatMap(([f, i]) => (f.aliasFormat === 'token' || f.aliasFormat === 'uuid' ? [] : cardNumberPlaces(parsed, f, i)));
  return withoutOverlaps([...named, ...patterned, ...numbers], parsed.body.length);
}

/** A place and the text that goes there (an alias inbound, card data outbound), in the body's encoding. */
export interface Replacement {
  place: Pick<Place, 'start' | 'end' | 'segmentKind'>;
  text: string;
}

/** The body with each place replaced; JSON stays JSON, a form stays a form, everything else byte for byte. */
export function rewriteBody(request: RouteRequest, replacements: readonly Replacement[]): string {
  const edits: Edit[] = replacements.map(({ place, text }) => ({
    start: place.start,
    end: place.end,
    text: encodeFor(place.segmentKind, text),
  }));
  return applyEdits(request.body, edits);
}

/**
 * Card-number-like data in places no filter names, by the one detector of packages/common read in
 * every spelling (the raw body, each JSON string or form value decoded, percent-encoding and JSON
 * escapes inside those). The named places are blanked first, so a run next to one is judged on its own.
 */
export function findUnmatchedCardData(request: RouteRequest, places: readonly Pick<Place, 'start' | 'end'>[]): Range[] {
  return unmatchedIn(parseBody(request.contentType, request.body), places);
}

function unmatchedIn(parsed: ParsedBody, places: readonly Pick<Place, 'start' | 'end'>[]): Range[] {
  const found = new Map<string, Range>();
  const prefix = places.length > 0 ? coveredBefore(places, parsed.body.length) : undefined;
  for (const view of viewsOf(parsed)) {
    let text = view.text;
    if (prefix !== undefined) {
      // Per code unit, as the view's ranges are.
      const units = view.text.split('');
      for (let k = 0; k < units.length; k++) {
        if (prefix[view.rawEnd[k]!]! - prefix[view.rawStart[k]!]! > 0) units[k] = 'x';
      }
      text = units.join('');
    }
    for (const [from, to] of findCardNumberRuns(text)) {
      const range = rawRangeOf(view, from, to);
      found.set(`${range.start}:${range.end}`, range);
    }
  }
  return [...found.values()].sort((a, b) => a.start - b.start);
}

export const REDACTED = '[redacted]';

/** The smallest range of whole decoded characters of `segment` that covers `range`. */
function snapped(segment: Segment, range: Range): Range {
  const { view } = segment;
  // Both maps are non-decreasing: the characters that touch the range are first..last.
  const first = firstAbove(view.rawEnd, range.start);
  const last = firstAbove(view.rawStart, range.end - 1) - 1;
  if (first > last) return range;
  return { start: Math.min(range.start, view.rawStart[first]!), end: Math.max(range.end, view.rawEnd[last]!) };
}

/**
 * Edits that blank each range in the body's own encoding: inside one JSON string, form value or
 * text, just the run; a JSON number, or a run across several values, the whole of each value.
 */
function redactionEdits(parsed: ParsedBody, ranges: readonly Range[]): Edit[] {
  const whole = new Set<Segment>();
  const partial = new Map<Segment, Range[]>();
  // Segments are in body order and do not overlap: the ones a range touches are found by bisection.
  const segmentEnds = parsed.segments.map((s) => s.end);
  for (const range of ranges) {
    const touched: Segment[] = [];
    for (let i = firstAbove(segmentEnds, range.start); i < parsed.segments.length && parsed.segments[i]!.start < range.end; i++) {
      touched.push(parsed.segments[i]!);
    }
    if (touched.length === 1 && touched[0]!.kind !== 'json-number' && range.start >= touched[0]!.start && range.end <= touched[0]!.end) {
      const segment = touched[0]!;
      const list = partial.get(segment);
      if (list === undefined) partial.set(segment, [snapped(segment, range)]);
      else list.push(snapped(segment, range));
    } else for (const segment of touched) whole.add(segment);
  }
  const edits: Edit[] = [];
  for (const segment of whole) {
    const mask = segment.kind === 'json-number' ? JSON.stringify(REDACTED) : encodeFor(segment.kind, REDACTED);
    edits.push({ start: segment.start, end: segment.end, text: mask });
  }
  for (const [segment, list] of partial) {
    if (whole.has(segment)) continue;
    const merged: Range[] = [];
    for (const r of [...list].sort((a, b) => a.start - b.start)) {
      const last = merged[merged.length - 1];
      if (last !== undefined && r.start <= last.end) last.end = Math.max(last.end, r.end);
      else merged.push({ ...r });
    }
    for (const r of merged) edits.push({ ...r, text: encodeFor(segment.kind, REDACTED) });
  }
  return edits;
}

/** More passes than any body needs: each one removes digits, and a body is at most 1 MiB of them. */
const MAX_REDACTION_PASSES = 16;

/**
 * The body with every card-number-like run outside the filters' places replaced by `[redacted]`
 * (a route's `unmatchedCardData: redact`). Passes repeat until nothing is found, since blanking one
 * run can join the digits around it; `undefined` when that does not settle (the caller refuses).
 */
export function redactUnmatchedCardData(
  request: RouteRequest,
  filters: readonly RouteFilter[],
): { body: string; redacted: number } | undefined {
  let body = request.body;
  let redacted = 0;
  for (let pass = 0; pass < MAX_REDACTION_PASSES; pass++) {
    const parsed = parseBody(request.contentType, body);
    const unmatched = unmatchedIn(parsed, findCardDataIn(parsed, filters));
    if (unmatched.length === 0) return { body, redacted };
    redacted += unmatched.length;
    body = applyEdits(body, redactionEdits(parsed, unmatched));
  }
  return undefined;
}
