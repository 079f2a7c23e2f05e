/**
 * The merchant's narrower brand rules (cardFields({ acceptedBrands })): a card of another brand is
 * refused in the iframe, as soon as its first digits name the brand, and never sent. The API's own
 * rules (which brands exist, their lengths) stay those of cardState.ts; this only takes brands away.
 */
import type { AcceptedBrand } from '../shared/protocol';
import type { FieldChecks } from './cardState';

/** The checks with the number refused as `brand_not_accepted` when its brand is known and not in the list. */
export function withAcceptedBrands(checks: FieldChecks, accepted: readonly AcceptedBrand[] | undefined): FieldChecks {
  const brand = checks.brand;
  if (accepted === undefined || brand === 'unknown' || (accepted as readonly string[]).includes(brand)) return checks;
  return { ...checks, number: { ...checks.number, complete: false, error: 'brand_not_accepted' } };
}
