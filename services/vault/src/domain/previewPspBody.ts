import type { ErrorCode } from '@tessera/common';
import { encode, encodingForContentType, PLACEHOLDERS, type BodyEncoding, type CardValues, type Placeholder } from './renderPspBody';

/**
 * Anything that looks like a placeholder: upper-case letters, digits and underscores in square
 * brackets. Form keys such as `card[number]` are lower case and so are not reported.
 */
const PLACEHOLDER_LIKE = /\[([A-Z][A-Z0-9_]{0,63})\]/g;

export interface UnfillablePlaceholder {
  placeholder: string;
  code: ErrorCode;
}

export interface PspBodyPreview {
  body: string;
  filled: string[];
  unfillable: UnfillablePlaceholder[];
  unknown: string[];
}

/**
 * PCI DSS 3.4.1 allows a PAN to be displayed with at most the first six and last four digits;
 * everything between becomes `*`, so the length stays visible (e.g. `424242******4242`).
 */
export function maskPan(number: string): string {
  if (number.length <= 10) return '*'.repeat(number.length);
  return number.slice(0, 6) + '*'.repeat(number.length - 10) + number.slice(-4);
}

/** Initials only: enough to see which card it is, not the holder's name. */
export function maskHolderName(name: string): string {
  return name
    .trim()
    .split(/\s+/)
    .map((word) => `${Array.from(word)[0] ?? ''}***`)
    .join(' ');
}

function maskedValue(placeholder: Placeholder, values: CardValues, encoding: BodyEncoding): string | { unavailable: ErrorCode } {
  switch (placeholder) {
    case 'CARD_NUMBER':
      return maskPan(values.number);
    case 'CARD_EXPIRY_MONTH':
      return String(values.expiryMonth).padStart(2, '0');
    case 'CARD_EXPIRY_YEAR':
      return String(values.expiryYear).padStart(4, '0');
    case 'CARD_CVV':
      // Same rule as renderPspBody: a missing or expired CVV cannot be filled.
      return values.cvv === undefined || values.cvv === '' ? { unavailable: 'cvv_unavailable' } : '***';
    case 'CARD_HOLDER':
      // Same rule and order as renderPspBody: free text only where it can be escaped.
      if (encoding === 'raw') return { unavailable: 'placeholder_not_encodable' };
      return values.holderName === undefined || values.holderName === ''
        ? { unavailable: 'holder_name_unavailable' }
        : maskHolderName(values.holderName);
  }
}

function isPlaceholder(name: string): name is Placeholder {
  return (PLACEHOLDERS as readonly string[]).includes(name);
}

/**
 * What renderPspBody would produce, with masked values: for dry runs. One pass, like the real
 * render. Placeholders that cannot be filled stay as they are and are listed with the error a
 * real render would raise; unknown `[...]` text is listed (a typo such as `[CARD_NUMBR]` is
 * otherwise sent to the PSP as it is). The CVV is passed only as present or absent (any
 * non-empty string), so callers need not decrypt it.
 */
export function previewPspBody(template: string, values: CardValues, contentType: string): PspBodyPreview {
  const encoding = encodingForContentType(contentType);
  const filled = new Set<string>();
  const unknown = new Set<string>();
  const unfillable = new Map<string, ErrorCode>();
  const body = template.replace(PLACEHOLDER_LIKE, (match, name: string) => {
    if (!isPlaceholder(name)) {
      unknown.add(match);
      return match;
    }
    const value = maskedValue(name, values, encoding);
    if (typeof value !== 'string') {
      unfillable.set(match, value.unavailable);
      return match;
    }
    filled.add(match);
    return encode(value, encoding);
  });
  return {
    body,
    filled: [...filled],
    unfillable: [...unfillable].map(([placeholder, code]) => ({ placeholder, code })),
    unknown: [...unknown],
  };
}
