/**
 * A request body as the filter engine reads it: the places that can hold a value (JSON strings and
 * numbers, form names and values, or the whole text), each with its decoded text and, for every
 * decoded character, the range of the body it came from. Edits are made in the body's own
 * encoding at those ranges, so everything else stays byte for byte as the client sent it.
 */

/** Decoded text and, per UTF-16 code unit of it, the raw [start, end) it came from. */
export interface View {
  text: string;
  rawStart: number[];
  rawEnd: number[];
}

export type BodyKind = 'json' | 'form' | 'text';

export interface Segment {
  kind: 'json-string' | 'json-number' | 'form-name' | 'form-value' | 'text';
  /** The raw range that an edit replaces: a JSON string's content (inside the quotes), a number token, a form name or value. */
  start: number;
  end: number;
  view: View;
  /** JSON values: their RFC 6901 pointer; form values: their decoded field name. */
  pointer?: string;
  field?: string;
}

export interface ParsedBody {
  kind: BodyKind;
  body: string;
  segments: Segment[];
}

export function bodyKindOf(contentType: string | undefined): BodyKind {
  const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (essence === 'application/json' || /^[a-z]+\/[a-z0-9.+-]*\+json$/.test(essence)) return 'json';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  return 'text';
}

function identityView(text: string, offset: number): View {
  const rawStart = new Array<number>(text.length);
  const rawEnd = new Array<number>(text.length);
  for (let i = 0; i < text.length; i++) {
    rawStart[i] = offset + i;
    rawEnd[i] = offset + i + 1;
  }
  return { text, rawStart, rawEnd };
}

const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * Percent-decoding (`+` as a space when `plus`), lenient: a `%` not followed by two hex digits is
 * itself. ASCII escapes map one by one; a run of escapes of UTF-8 bytes maps each decoded
 * character to the whole run.
 */
export function percentDecodedView(source: View, plus: boolean): View {
  const text: string[] = [];
  const rawStart: number[] = [];
  const rawEnd: number[] = [];
  const s = source.text;
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '%' && HEX.test(s.slice(i + 1, i + 3))) {
      const byte = parseInt(s.slice(i + 1, i + 3), 16);
      if (byte < 0x80) {
        text.push(String.fromCharCode(byte));
        rawStart.push(source.rawStart[i]!);
        rawEnd.push(source.rawEnd[i + 2]!);
        i += 3;
        continue;
      }
      const bytes: number[] = [];
      let j = i;
      while (j < s.length && s[j] === '%' && HEX.test(s.slice(j + 1, j + 3)) && parseInt(s.slice(j + 1, j + 3), 16) >= 0x80) {
        bytes.push(parseInt(s.slice(j + 1, j + 3), 16));
        j += 3;
      }
      const decoded = new TextDecoder().decode(Uint8Array.from(bytes));
      for (let k = 0; k < decoded.length; k++) {
        text.push(decoded[k]!);
        rawStart.push(source.rawStart[i]!);
        rawEnd.push(source.rawEnd[j - 1]!);
      }
      i = j;
      continue;
    }
    text.push(plus && c === '+' ? ' ' : c);
    rawStart.push(source.rawStart[i]!);
    rawEnd.push(source.rawEnd[i]!);
    i++;
  }
  return { text: text.join(''), rawStart, rawEnd };
}

const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** JSON string escapes decoded, lenient (an unknown escape is left as it is). */
export function jsonUnescapedView(source: View): View {
  const text: string[] = [];
  const rawStart: number[] = [];
  const rawEnd: number[] = [];
  const s = source.text;
  let i = 0;
  while (i < s.length) {
    if (s[i] === '\\' && i + 1 < s.length) {
      const next = s[i + 1]!;
      if (next === 'u' && /^[0-9A-Fa-f]{4}$/.test(s.slice(i + 2, i + 6))) {
        text.push(String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16)));
        rawStart.push(source.rawStart[i]!);
        rawEnd.push(source.rawEnd[i + 5]!);
        i += 6;
        continue;
      }
      const simple = SIMPLE_ESCAPES[next];
      if (simple !== undefined) {
        text.push(simple);
        rawStart.push(source.rawStart[i]!);
        rawEnd.push(source.rawEnd[i + 1]!);
        i += 2;
        continue;
      }
    }
    text.push(s[i]!);
    rawStart.push(source.rawStart[i]!);
    rawEnd.push(source.rawEnd[i]!);
    i++;
  }
  return { text: text.join(''), rawStart, rawEnd };
}

class JsonSyntaxError extends Error {}

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A position-keeping JSON reader: the string and number tokens with their ranges and pointers. */
function jsonSegments(body: string): Segment[] | undefined {
  const segments: Segment[] = [];
  let i = 0;
  const ws = () => {
    while (i < body.length && ' \t\n\r'.includes(body[i]!)) i++;
  };
  const readString = (pointer: string | undefined, isKey: boolean): string => {
    if (body[i] !== '"') throw new JsonSyntaxError();
    const start = ++i;
    while (i < body.length && body[i] !== '"') {
      const c = body.charCodeAt(i);
      if (c < 0x20) throw new JsonSyntaxError();
      if (body[i] === '\\') {
        const next = body[i + 1];
        if (next === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(body.slice(i + 2, i + 6))) throw new JsonSyntaxError();
          i += 6;
        } else if (next !== undefined && next in SIMPLE_ESCAPES) i += 2;
        else throw new JsonSyntaxError();
      } else i++;
    }
    if (i >= body.length) throw new JsonSyntaxError();
    const end = i++;
    const view = jsonUnescapedView(identityView(body.slice(start, end), start));
    segments.push({ kind: 'json-string', start, end, view, ...(isKey ? {} : { pointer }) });
    return view.text;
  };
  const readValue = (pointer: string): void => {
    ws();
    const c = body[i];
    if (c === '{') {
      i++;
      ws();
      if (body[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const key = readString(undefined, true);
        ws();
        if (body[i++] !== ':') throw new JsonSyntaxError();
        readValue(`${pointer}/${escapePointerToken(key)}`);
        ws();
        if (body[i] === ',') {
          i++;
          continue;
        }
        if (body[i++] !== '}') throw new JsonSyntaxError();
        return;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (body[i] === ']') {
        i++;
        return;
      }
      for (let index = 0; ; index++) {
        readValue(`${pointer}/${index}`);
        ws();
        if (body[i] === ',') {
          i++;
          continue;
        }
        if (body[i++] !== ']') throw new JsonSyntaxError();
        return;
      }
    }
    if (c === '"') {
      readString(pointer, false);
      return;
    }
    const number = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(body.slice(i, i + 400));
    if (number) {
      const start = i;
      i += number[0].length;
      segments.push({ kind: 'json-number', start, end: i, view: identityView(number[0], start), pointer });
      return;
    }
    for (const literal of ['true', 'false', 'null']) {
      if (body.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    throw new JsonSyntaxError();
  };
  try {
    readValue('');
    ws();
    if (i !== body.length) return undefined;
    return segments;
  } catch (err) {
    if (err instanceof JsonSyntaxError || err instanceof RangeError) return undefined;
    throw err;
  }
}

function formSegments(body: string): Segment[] {
  const segments: Segment[] = [];
  let offset = 0;
  for (const component of body.split('&')) {
    const equals = component.indexOf('=');
    const nameEnd = offset + (equals < 0 ? component.length : equals);
    const nameView = percentDecodedView(identityView(body.slice(offset, nameEnd), offset), true);
    segments.push({ kind: 'form-name', start: offset, end: nameEnd, view: nameView });
    if (equals >= 0) {
      const valueStart = nameEnd + 1;
      const valueEnd = offset + component.length;
      segments.push({
        kind: 'form-value',
        start: valueStart,
        end: valueEnd,
        view: percentDecodedView(identityView(body.slice(valueStart, valueEnd), valueStart), true),
        field: nameView.text,
      });
    }
    offset += component.length + 1;
  }
  return segments;
}

/**
 * The body's segments by its content type. A body that says JSON but does not parse is read as
 * text: its card data is still found, only JSON pointers find nothing in it.
 */
export function parseBody(contentType: string | undefined, body: string): ParsedBody {
  const kind = bodyKindOf(contentType);
  if (kind === 'json') {
    const segments = jsonSegments(body);
    if (segments !== undefined) return { kind, body, segments };
  }
  if (kind === 'form') return { kind, body, segments: formSegments(body) };
  return { kind: 'text', body, segments: [{ kind: 'text', start: 0, end: body.length, view: identityView(body, 0) }] };
}

/**
 * Every spelling the detector reads: the raw body (a run across tokens, JSON numbers), each
 * segment decoded, and each decoded once more the other way (a form value holding JSON escapes,
 * a JSON string or a text body holding percent-encoding).
 */
export function viewsOf(parsed: ParsedBody): View[] {
  const views: View[] = [identityView(parsed.body, 0)];
  for (const segment of parsed.segments) {
    views.push(segment.view);
    if (segment.kind === 'json-string' || segment.kind === 'text') views.push(percentDecodedView(segment.view, false));
    if (segment.kind === 'form-name' || segment.kind === 'form-value' || segment.kind === 'text')
      views.push(jsonUnescapedView(segment.view));
  }
  return views;
}

/** The text a value becomes in a segment of this kind. */
export function encodeFor(kind: Segment['kind'], text: string): string {
  if (kind === 'json-string') return JSON.stringify(text).slice(1, -1);
  // JSON allows no leading zero, so an alias like "0042" goes back as a string.
  if (kind === 'json-number') return /^(0|[1-9]\d*)$/.test(text) ? text : JSON.stringify(text);
  if (kind === 'form-name' || kind === 'form-value') return encodeURIComponent(text);
  return text;
}

export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** `body` with non-overlapping edits applied. */
export function applyEdits(body: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = '';
  let from = 0;
  for (const edit of sorted) {
    if (edit.start < from) throw new Error('overlapping edits');
    out += body.slice(from, edit.start) + edit.text;
    from = edit.end;
  }
  return out + body.slice(from);
}
