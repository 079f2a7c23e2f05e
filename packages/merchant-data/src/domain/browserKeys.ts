import { digestsEqual, isApiKeyExpired, keyKindOf, type ApiKeyRecord } from './apiKeys';
import type { PresentedKey } from './apiKeyDecision';
import { authorizePublishableKey } from './keyRestrictions';

export type BrowserKeyRefusal = 'api_key_missing' | 'api_key_invalid' | 'origin_not_allowed';
export type BrowserKeyCheck = { ok: true; record: ApiKeyRecord } | { ok: false; code: BrowserKeyRefusal; record?: ApiKeyRecord };

/**
 * Whether a presented key is a live publishable key at all: the record found for it, with the
 * same constant-time digest comparison, revocation, expiry, mode and kind checks as every other
 * route. A secret key is refused here like an unknown one: this route exists only for browsers.
 */
export function usablePublishableKey(
  key: PresentedKey,
  record: ApiKeyRecord | undefined,
  now: Date,
): { ok: true; record: ApiKeyRecord } | { ok: false; code: 'api_key_missing' | 'api_key_invalid' } {
  if (!key.ok) return key;
  if (
    !record ||
    key.kind !== 'publishable' ||
    keyKindOf(record) !== 'publishable' ||
    !digestsEqual(record.digest, key.digest) ||
    record.revokedAt !== undefined ||
    isApiKeyExpired(record, now) ||
    record.mode !== key.mode
  ) {
    return { ok: false, code: 'api_key_invalid' };
  }
  return { ok: true, record };
}

/**
 * The browser tokenization route's decision. The request comes from Tessera's card fields, so its
 * `Origin` is the fields origin (checked by the route); the merchant page that framed the fields
 * is named by the fields in `x-tessera-parent-origin`, and must be one of the key's allowed
 * origins. The browser has already enforced the same list as the fields page's frame-ancestors,
 * so the fields can only run, and only name a parent, inside an allowed page. (A client outside a
 * browser can claim any origin: that is why browser tokens are limited, see docs/browser.md.)
 */
export function decideBrowserKey(
  key: PresentedKey,
  record: ApiKeyRecord | undefined,
  now: Date,
  parentOrigin: string | undefined,
): BrowserKeyCheck {
  const usable = usablePublishableKey(key, record, now);
  if (!usable.ok) return record ? { ...usable, record } : usable;
  if (authorizePublishableKey(usable.record, parentOrigin) !== undefined)
    return { ok: false, code: 'origin_not_allowed', record: usable.record };
  return usable;
}
