import type { Logger } from '@tessera/common';
import { type ApiKeyRecord, type ApiKeyLookup, hashApiKey, pepperIdOf, type PresentedKey, presentedKeyOf } from '@tessera/merchant-data';

/**
 * Finding a presented API key under every configured pepper (API_KEY_PEPPERS) and moving it to the
 * newest on use. One lookup for every kind of key and every place a key is read (the secret-key
 * middleware, the browser routes, the fields page, "test this key"), so a pepper rotation
 * invalidates no key of either kind (docs/dashboard.md).
 */
export interface PepperedKeyStore {
  keyStore: ApiKeyLookup;
  /** The newest pepper: new keys are hashed with it; a key found under another moves to it. */
  pepper: string;
  /** The older peppers of API_KEY_PEPPERS, newest first. */
  previousPeppers?: readonly string[];
  /**
   * How a key is moved to the newest pepper; absent: the key store's rehashDigest. A service whose
   * Redis user may not write the digest index (the fields service) asks one that may instead.
   */
  moveToCurrentPepper?: PepperMove | undefined;
}

/**
 * Moves key `keyId` from `fromDigest` to `toDigest` under pepper `pepperId` (ApiKeyLookup's
 * rehashDigest has this shape); resolves true only when the key moved now.
 */
export type PepperMove = (keyId: string, fromDigest: string, toDigest: string, pepperId: string) => Promise<boolean>;

export type ValidKey = Extract<PresentedKey, { ok: true }>;

/** A record found for a presented key, with the key's digest under the pepper it was found by. */
export interface FoundKey {
  key: ValidKey;
  record: ApiKeyRecord;
}

/**
 * A key that is not under the newest pepper, looked up under the older ones (a few HMACs and
 * lookups, and only for keys not found at once). The digest it was found by replaces the one
 * the decision compares.
 */
export async function lookUpUnderOlderPeppers(
  deps: Pick<PepperedKeyStore, 'keyStore' | 'previousPeppers'>,
  key: ValidKey,
  apiKey: string,
): Promise<FoundKey | undefined> {
  for (const pepper of deps.previousPeppers ?? []) {
    const digest = hashApiKey(pepper, apiKey);
    const record = await deps.keyStore.findByDigest(digest);
    if (record !== undefined) return { key: { ...key, digest }, record };
  }
  return undefined;
}

/**
 * The presented header as a key (its digest under the newest pepper, or why it is malformed) and
 * the record found for it under the newest pepper, else under the older ones.
 */
export async function lookUpApiKey(
  deps: Pick<PepperedKeyStore, 'keyStore' | 'pepper' | 'previousPeppers'>,
  presented: string | string[] | undefined,
): Promise<{ key: PresentedKey; found: FoundKey | undefined }> {
  const key = presentedKeyOf(deps.pepper, presented);
  if (!key.ok || typeof presented !== 'string') return { key, found: undefined };
  const record = await deps.keyStore.findByDigest(key.digest);
  return { key, found: record !== undefined ? { key, record } : await lookUpUnderOlderPeppers(deps, key, presented) };
}

/**
 * Migration on use, once a key has passed: a key found under an older pepper gets its digest under
 * the newest, so the old pepper can be dropped once `npm run keys -- rehash-status` counts no key on
 * it; a key made before records named their pepper gets it recorded. Best effort and not awaited:
 * a failure only means the next use tries again.
 */
export function keepOnCurrentPepper(
  deps: PepperedKeyStore & { logger: Logger },
  record: ApiKeyRecord,
  foundDigest: string,
  currentDigest: string,
): void {
  if (foundDigest === currentDigest && record.pepperId !== undefined) return;
  const move: PepperMove = deps.moveToCurrentPepper ?? ((...args) => deps.keyStore.rehashDigest(...args));
  move(record.id, foundDigest, currentDigest, pepperIdOf(deps.pepper)).then(
    (moved) => {
      if (moved && foundDigest !== currentDigest) deps.logger.info({ keyId: record.id }, 'API key moved to the current pepper');
    },
    (err: unknown) => deps.logger.warn({ err, keyId: record.id }, 'could not move an API key to the current pepper'),
  );
}
