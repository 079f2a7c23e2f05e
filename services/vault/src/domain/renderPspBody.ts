import { TesseraError } from '@tessera/common';

export const PLACEHOLDERS = ['CARD_NUMBER', 'CARD_EXPIRY_MONTH', 'CARD_EXPIRY_YEAR', 'CARD_CVV', 'CARD_HOLDER'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

const PLACEHOLDER_PATTERN = new RegExp(`\\[(${PLACEHOLDERS.join('|')})\\]`, 'g');

export interface CardValues {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  /** undefined when no CVV was given or it has expired. */
  cvv?: string | undefined;
  /** undefined or empty when no holder name was given. */
  holderName?: string | undefined;
}

/**
 * How values are written into a body: JSON string escapes, form (percent) encoding, XML text
 * escapes, or `raw` for every other content type. Raw takes only the digit-only values: the holder
 * name is free text a cardholder typed, and unescaped in a format we cannot parse (multipart,
 * plain text, a PSP's own format) it could end a field or start a new one.
 */
export type BodyEncoding = 'json' | 'form' | 'xml' | 'raw';

/**
 * The one content-type classifier for render and preview. Media type only: parameters such as
 * charset are ignored, and so is case (RFC 9110 8.3.1). JSON: any `json`, `x-json` or `+json`
 * subtype (`application/json`, `text/json`, `application/x-json`, `application/vnd.api+json`);
 * XML: `xml` or `+xml` (`application/xml`, `text/xml`, `application/soap+xml`).
 */
export function encodingForContentType(contentType: string): BodyEncoding {
  const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  const match = /^[!#$%&'*+.^_`|~0-9a-z-]+\/([!#$%&'*+.^_`|~0-9a-z-]+)$/.exec(mediaType);
  const subtype = match?.[1];
  if (subtype === undefined) return 'raw';
  if (subtype === 'json' || subtype === 'x-json' || subtype.endsWith('+json')) return 'json';
  if (mediaType === 'application/x-www-form-urlencoded') return 'form';
  if (subtype === 'xml' || subtype.endsWith('+xml')) return 'xml';
  return 'raw';
}

/**
 * The default most bytes a rendered body may have: twice the gateway's 1 MiB request limit
 * (room for card data to grow a body), far below the 12 MiB gRPC message that carries it.
 */
export const DEFAULT_RENDER_MAX_BYTES = 2 * 1024 * 1024;

export function templateUses(template: string, placeholder: Placeholder): boolean {
  return template.includes(`[${placeholder}]`);
}

/** Lone surrogates cannot be encoded as UTF-8 (encodeURIComponent throws on them); U+FFFD is what a decoder would show. */
function wellFormed(value: string): string {
  return value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** Characters XML 1.0 cannot carry at all, not even as references (section 2.2): shown as U+FFFD. */
/* eslint-disable no-control-regex -- these control characters are exactly what must be matched */
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/* eslint-enable no-control-regex */
const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  // As references, so parsers neither normalise them (line ends, attribute whitespace) nor drop them.
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/** Safe both as element text and inside a single- or double-quoted attribute value. */
function escapeXmlText(value: string): string {
  return value.replace(NOT_XML_CHAR, '\uFFFD').replace(/[&<>"'\t\n\r]/g, (c) => XML_ESCAPES[c] ?? c);
}

export function encode(value: string, encoding: BodyEncoding): string {
  switch (encoding) {
    case 'json':
      // Escapes quotes, backslashes and control characters so the value stays inside its JSON string.
      return JSON.stringify(value).slice(1, -1);
    case 'form':
      return encodeURIComponent(wellFormed(value)).replace(/%20/g, '+');
    case 'xml':
      return escapeXmlText(value);
    case 'raw':
      return value;
  }
}

function valueFor(placeholder: Placeholder, values: CardValues, encoding: BodyEncoding): string {
  switch (placeholder) {
    case 'CARD_NUMBER':
      return values.number;
    case 'CARD_EXPIRY_MONTH':
      return String(values.expiryMonth).padStart(2, '0');
    case 'CARD_EXPIRY_YEAR':
      return String(values.expiryYear).padStart(4, '0');
    case 'CARD_CVV':
      if (values.cvv === undefined || values.cvv === '') throw new TesseraError('cvv_unavailable');
      return values.cvv;
    case 'CARD_HOLDER':
      // A fault of the request, whatever the card holds: reported before the card's own gaps.
      if (encoding === 'raw') throw new TesseraError('placeholder_not_encodable', { param: 'pspBody' });
      if (values.holderName === undefined || values.holderName === '') throw new TesseraError('holder_name_unavailable');
      return values.holderName;
  }
}

/**
 * Walks the template once, handing each piece (literal text or an encoded value) to `emit` and
 * counting UTF-8 bytes as it goes, so a body that would pass `maxBytes` is refused at that point
 * and never built: 975 KB of `[CARD_HOLDER]` can otherwise expand a hundredfold. Each value is
 * encoded once however often it repeats. Returns the body's size in bytes.
 */
function walkRender(template: string, values: CardValues, contentType: string, maxBytes: number, emit: (piece: string) => void): number {
  const encoding = encodingForContentType(contentType);
  const encoded = new Map<string, { text: string; bytes: number }>();
  let bytes = 0;
  const add = (piece: string, pieceBytes: number): void => {
    bytes += pieceBytes;
    if (bytes > maxBytes) {
      throw new TesseraError('rendered_body_too_large', {
        param: 'pspBody',
        message: `With card data filled in, pspBody would exceed the limit of ${maxBytes} bytes.`,
      });
    }
    emit(piece);
  };
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER_PATTERN)) {
    const literal = template.slice(last, match.index);
    add(literal, Buffer.byteLength(literal));
    const name = match[1] as Placeholder;
    let value = encoded.get(name);
    if (value === undefined) {
      const text = encode(valueFor(name, values, encoding), encoding);
      value = { text, bytes: Buffer.byteLength(text) };
      encoded.set(name, value);
    }
    add(value.text, value.bytes);
    last = match.index + match[0].length;
  }
  const tail = template.slice(last);
  add(tail, Buffer.byteLength(tail));
  return bytes;
}

/**
 * Raises what renderPspBody would raise (a missing value, a holder name in a body it cannot be
 * escaped for, a body over `maxBytes`) without building the body. The vault runs it before it
 * consumes a CVV, with a stand-in CVV of the longest length: a refused body must not burn it.
 */
export function checkRenderable(template: string, values: CardValues, contentType: string, maxBytes: number): void {
  walkRender(template, values, contentType, maxBytes, () => undefined);
}

/**
 * Fills the placeholders of a PSP body in one pass over the template, so card data that itself
 * looks like a placeholder (a holder name "[CARD_NUMBER]") is never expanded. Unknown `[...]`
 * text is left as it is. The result holds card data: callers must never log it.
 */
export function renderPspBody(template: string, values: CardValues, contentType: string, maxBytes = DEFAULT_RENDER_MAX_BYTES): string {
  const pieces: string[] = [];
  walkRender(template, values, contentType, maxBytes, (piece) => pieces.push(piece));
  return pieces.join('');
}
