export const BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay', 'maestro', 'unknown'] as const;
export type Brand = (typeof BRANDS)[number];

interface BrandRule {
  brand: Exclude<Brand, 'unknown'>;
  /** Inclusive IIN ranges, compared on the same number of leading digits as the bounds. */
  ranges: ReadonlyArray<readonly [string, string]>;
  lengths: readonly number[];
}

const range = (from: string, to: string = from): readonly [string, string] => [from, to];
const lengths = (min: number, max: number): number[] => Array.from({ length: max - min + 1 }, (_, i) => min + i);

/**
 * Ordered from most to least specific where ranges overlap (Discover's 65 before Maestro's 6,
 * UnionPay's 62 after Discover's 622126-622925 co-badged range is deliberately left to Discover).
 */
const RULES: readonly BrandRule[] = [
  { brand: 'amex', ranges: [range('34'), range('37')], lengths: [15] },
  { brand: 'visa', ranges: [range('4')], lengths: [13, 16, 19] },
  { brand: 'mastercard', ranges: [range('51', '55'), range('2221', '2720')], lengths: [16] },
  { brand: 'discover', ranges: [range('6011'), range('644', '649'), range('65'), range('622126', '622925')], lengths: lengths(16, 19) },
  { brand: 'jcb', ranges: [range('3528', '3589')], lengths: lengths(16, 19) },
  { brand: 'diners', ranges: [range('300', '305'), range('3095'), range('36'), range('38', '39')], lengths: lengths(14, 19) },
  { brand: 'unionpay', ranges: [range('62'), range('81')], lengths: lengths(16, 19) },
  { brand: 'maestro', ranges: [range('50'), range('56', '58'), range('6304'), range('639'), range('67')], lengths: lengths(12, 19) },
];

function inRange(digits: string, [from, to]: readonly [string, string]): boolean {
  const prefix = digits.slice(0, from.length);
  return prefix.length === from.length && prefix >= from && prefix <= to;
}

/** The brand whose IIN ranges contain the number, or `unknown`. Length is checked separately. */
export function detectBrand(digits: string): Brand {
  for (const rule of RULES) {
    if (rule.ranges.some((r) => inRange(digits, r))) return rule.brand;
  }
  return 'unknown';
}

export const MIN_PAN_LENGTH = 12;
export const MAX_PAN_LENGTH = 19;

/** Whether a number of this length can belong to the brand. */
export function isValidLengthForBrand(brand: Brand, length: number): boolean {
  if (brand === 'unknown') return length >= MIN_PAN_LENGTH && length <= MAX_PAN_LENGTH;
  const rule = RULES.find((r) => r.brand === brand);
  return rule !== undefined && rule.lengths.includes(length);
}

/** The CVV length a brand prints on its cards (4 on the front for Amex, 3 on the back elsewhere). */
export function cvvLengthForBrand(brand: Brand): 3 | 4 {
  return brand === 'amex' ? 4 : 3;
}
