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

export type BodyEncoding = 'json' | 'form' | 'raw';

/** Media type only: parameters such as charset are ignored, and so is case (RFC 9110 8.3.1). */
export function encodingForContentType(contentType: string): BodyEncoding {
  const mediaType = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) return 'json';
  if (mediaType === 'application/x-www-form-urlencoded') return 'form';
  return 'raw';
}

export function templateUses(template: string, placeholder: Placeholder): boolean {
  return template.includes(`[${placeholder}]`);
}

/** Lone surrogates cannot be encoded as UTF-8 (encodeURIComponent throws on them); U+FFFD is what a decoder would show. */
function wellFormed(value: string): string {
  return value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

export function encode(value: string, encoding: BodyEncoding): string {
  switch (encoding) {
    case 'json':
      // Escapes quotes, backslashes and control characters so the value stays inside its JSON string.
      return JSON.stringify(value).slice(1, -1);
    case 'form':
      return encodeURIComponent(wellFormed(value)).replace(/%20/g, '+');
    case 'raw':
      return value;
  }
}

function valueFor(placeholder: Placeholder, values: CardValues): string {
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
      if (values.holderName === undefined || values.holderName === '') throw new TesseraError('holder_name_unavailable');
      return values.holderName;
  }
}

/**
 * Fills the placeholders of a PSP body in one pass over the template, so card data that itself
 * looks like a placeholder (a holder name "[CARD_NUMBER]") is never expanded. Unknown `[...]`
 * text is left as it is. The result holds card data: callers must never log it.
 */
export function renderPspBody(template: string, values: CardValues, contentType: string): string {
  const encoding = encodingForContentType(contentType);
  return template.replace(PLACEHOLDER_PATTERN, (_match, name: string) => encode(valueFor(name as Placeholder, values), encoding));
}
