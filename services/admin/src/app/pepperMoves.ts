import { createLogThrottle, type Closable, type Logger } from '@tessera/common';
import { type ApiKeyMoveRequests, type ApiKeyStore, type KeyMoveRequest, pepperIdOf } from '@tessera/merchant-data';

/**
 * Publishable keys used only on the fields service move to the newest pepper here: the fields
 * service's Redis user may not write the digest index (with that right a compromise of it could
 * point a digest it knows at any key, secret ones included), so it asks and this service applies.
 * A request is only believed as far as it cannot hurt: the key must be publishable and still under
 * the digest the request says it was found by, and the pepper must be this service's newest.
 */
export interface PepperMoveDeps {
  keyStore: Pick<ApiKeyStore, 'get' | 'rehashDigest'>;
  /** The newest pepper of API_KEY_PEPPERS: a move to any other is refused. */
  pepper: string;
  logger: Logger;
}

export type PepperMoveOutcome = 'moved' | 'already' | 'refused';

const KEY_ID = /^key_[0-9A-Za-z]{1,64}$/;
const DIGEST = /^[0-9a-f]{64}$/;

export async function applyPepperMove(deps: PepperMoveDeps, request: KeyMoveRequest): Promise<PepperMoveOutcome> {
  const { keyId, foundDigest, currentDigest, pepperId } = request;
  // Only ids are logged, and only ones shaped like ids: a request is written by a less trusted service.
  const refuse = (reason: string, logged: { keyId?: string } = { keyId }): PepperMoveOutcome => {
    deps.logger.warn({ ...logged, reason }, 'refused a request to move an API key to the current pepper');
    return 'refused';
  };
  if (!KEY_ID.test(keyId) || !DIGEST.test(foundDigest) || !DIGEST.test(currentDigest)) return refuse('malformed request', {});
  const record = await deps.keyStore.get(keyId);
  if (record === undefined) return refuse('no such key');
  if (record.kind !== 'publishable') return refuse('not a publishable key');
  // Several fields replicas ask for the same move: the ones after the first find it done.
  if (record.digest === currentDigest && record.pepperId === pepperId) return 'already';
  if (pepperId !== pepperIdOf(deps.pepper)) return refuse("not this service's newest pepper");
  if (record.digest !== foundDigest) return refuse('the key is no longer under the digest it was found by');
  if (!(await deps.keyStore.rehashDigest(keyId, foundDigest, currentDigest, pepperId))) return refuse('the key changed meanwhile');
  if (foundDigest !== currentDigest) deps.logger.info({ keyId }, 'API key moved to the current pepper');
  return 'moved';
}

/** How often the requests are read when there were none: a key's move waits at most this long. */
export const PEPPER_MOVES_INTERVAL_MS = 1000;
const BATCH = 100;

/**
 * Applies the fields service's requests as they come, until closed (runService closes it before
 * Redis). A request taken and not applied (Redis failed in between) is lost: the fields service
 * asks again on the key's next use after its interval.
 */
export function startPepperMoves(deps: PepperMoveDeps & { requests: Pick<ApiKeyMoveRequests, 'take'>; intervalMs?: number }): Closable {
  const mayLog = createLogThrottle();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const drain = async (): Promise<void> => {
    try {
      for (;;) {
        const batch = await deps.requests.take(BATCH);
        for (const request of batch) await applyPepperMove(deps, request);
        if (batch.length === 0 || stopped) return;
      }
    } catch (err) {
      if (mayLog()) deps.logger.warn({ err }, 'could not apply the requests to move API keys to the current pepper');
    }
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = drain().finally(schedule);
    }, deps.intervalMs ?? PEPPER_MOVES_INTERVAL_MS);
  };
  schedule();
  return {
    name: 'pepper moves',
    async close() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
