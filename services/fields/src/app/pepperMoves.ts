import { createLastUseThrottle, type PepperMove } from '@tessera/edge';
import type { ApiKeyMoveRequests } from '@tessera/merchant-data';

/**
 * How often one process asks again for the same key: until the admin service has moved it, every
 * use of the key finds it under the old pepper.
 */
export const PEPPER_MOVE_REQUEST_INTERVAL_MS = 60_000;

/**
 * The fields service's way to move a key to the newest pepper (keyLookup's PepperMove): its Redis
 * user may not write the digest index, so it asks the admin service, which checks the request and
 * applies it (services/admin/src/app/pepperMoves.ts). Never "moved" here: the move comes later.
 */
export function requestPepperMoves(
  requests: Pick<ApiKeyMoveRequests, 'request'>,
  now: () => Date,
  intervalMs = PEPPER_MOVE_REQUEST_INTERVAL_MS,
): PepperMove {
  const shouldAsk = createLastUseThrottle(intervalMs);
  return async (keyId, foundDigest, currentDigest, pepperId) => {
    if (shouldAsk(keyId, now(), undefined)) await requests.request({ keyId, foundDigest, currentDigest, pepperId });
    return false;
  };
}
