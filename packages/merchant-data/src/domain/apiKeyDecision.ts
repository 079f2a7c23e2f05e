import {
  digestsEqual,
  hashApiKey,
  isApiKeyExpired,
  kindAndModeOfApiKey,
  keyKindOf,
  type ApiKeyKind,
  type ApiKeyRecord,
  type KeyMode,
} from './apiKeys';
import { checkKeyRestrictions } from './keyRestrictions';

export type ApiKeyRefusal = 'api_key_missing' | 'api_key_invalid' | 'ip_not_allowed' | 'origin_not_allowed' | 'publishable_key_forbidden';

export type ApiKeyCheck = { ok: true; record: ApiKeyRecord } | { ok: false; code: ApiKeyRefusal; record?: ApiKeyRecord };

export type PresentedKey =
  { ok: true; kind: ApiKeyKind; mode: KeyMode; digest: string } | { ok: false; code: 'api_key_missing' | 'api_key_invalid' };

/** What can be told from the header alone: no key, a malformed key, or the kind, mode and digest to look up. */
export function presentedKeyOf(pepper: string, presented: string | string[] | undefined): PresentedKey {
  if (presented === undefined || presented === '') return { ok: false, code: 'api_key_missing' };
  // A repeated header arrives joined with ", " and so fails the format check, like any typo.
  const declared = typeof presented === 'string' ? kindAndModeOfApiKey(presented) : undefined;
  if (declared === undefined || typeof presented !== 'string') return { ok: false, code: 'api_key_invalid' };
  return { ok: true, ...declared, digest: hashApiKey(pepper, presented) };
}

/**
 * The decision for a /v1 route on the record found for a well-formed key (or on none), made fresh
 * for each request. Every /v1 route today needs a secret key: a publishable key that is itself
 * valid gets `publishable_key_forbidden`, unless its request names an origin the key does not
 * allow, which is reported first (`origin_not_allowed`, an authentication failure). The browser
 * tokenization route will check publishable keys with authorizePublishableKey instead.
 */
export function decideApiKey(
  key: Extract<PresentedKey, { ok: true }>,
  record: ApiKeyRecord | undefined,
  now: Date,
  request: { clientIp: string | undefined; origin: string | undefined },
): ApiKeyCheck {
  if (
    !record ||
    !digestsEqual(record.digest, key.digest) ||
    record.revokedAt !== undefined ||
    isApiKeyExpired(record, now) ||
    record.mode !== key.mode ||
    keyKindOf(record) !== key.kind
  ) {
    return { ok: false, code: 'api_key_invalid', ...(record ? { record } : {}) };
  }
  const refused = checkKeyRestrictions(record, request);
  if (refused !== undefined) return { ok: false, code: refused, record };
  if (keyKindOf(record) === 'publishable') return { ok: false, code: 'publishable_key_forbidden', record };
  return { ok: true, record };
}
