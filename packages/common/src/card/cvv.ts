import { cvvLengthForBrand, type Brand } from './brands';

export type CvvResult = { ok: true; cvv: string } | { ok: false };

/**
 * The spec types cvv as an integer, which loses leading zeros ("012" arrives as 12), so an
 * integer is left-padded to the brand's length. Strings must already have that length. Test
 * cards accept any 3-4 digit CVV, as the spec's test mode says.
 */
export function normalizeCvv(input: number | string, brand: Brand, testCard = false): CvvResult {
  const allowed: number[] = testCard || brand === 'unknown' ? [3, 4] : [cvvLengthForBrand(brand)];
  if (typeof input === 'number') {
    if (!Number.isSafeInteger(input) || input < 0) return { ok: false };
    const raw = String(input);
    if (allowed.includes(raw.length)) return { ok: true, cvv: raw };
    const target = Math.min(...allowed);
    if (raw.length > target) return { ok: false };
    return { ok: true, cvv: raw.padStart(target, '0') };
  }
  if (!/^\d+$/.test(input) || !allowed.includes(input.length)) return { ok: false };
  return { ok: true, cvv: input };
}
