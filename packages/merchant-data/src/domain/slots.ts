/**
 * Where gateway state sits in a Redis Cluster. A key's slot is the hash of its first `{…}` (the
 * hash tag), so every key named with a merchant's tag lives on the master that holds that tag's
 * slot, and a script may touch all of them at once (Redis Cluster runs a script on one slot only).
 * What one API request needs (the key's record, its rate window and last use, the merchant's
 * settings, idempotency records and request log) carries its merchant's tag: when a master fails
 * over, only the merchants whose tags hash to its slots wait for the new master. Merchant ids
 * match MERCHANT_ID_PATTERN (no braces), so the tag is the whole id.
 *
 * A standalone Redis ignores the braces: the layout is the same in both modes.
 */
export function merchantSlot(merchantId: string): string {
  return `{m:${merchantId}}`;
}

/**
 * A name whose first segment (up to the first `:`) is a merchant id (an idempotency scope, a quota
 * owner), with that segment replaced by the merchant's tag.
 */
export function inMerchantSlot(merchantScoped: string): string {
  const colon = merchantScoped.indexOf(':');
  const merchantId = colon < 0 ? merchantScoped : merchantScoped.slice(0, colon);
  return merchantSlot(merchantId) + (colon < 0 ? '' : merchantScoped.slice(colon));
}

/**
 * The hash tag of everything the gateway's operators and the dashboard keep (operators, their
 * sessions and login throttles, the admin audit trail): one slot, as their scripts and MULTIs
 * touch several keys, and no API request reads it. It is also the prefix every gateway key had in
 * a Cluster before merchant slots (see the gateway's store/layoutMigration.ts).
 */
export const ADMIN_SLOT = '{tessera-gateway}:';
