import { emitEvent, type ApiKeyRecord } from '@tessera/merchant-data';
import type { FieldsEventDeps } from './formSessionEvents';

/**
 * `card_testing.suspected`: a key was just marked under card-testing attack (the limiter tells once
 * per cool-down on a replica). Recorded once per key per cool-down window across replicas too
 * (recordOnce, the window's start in the name). Never awaited by a checkout, never throws.
 */
export function cardTestingReporter(
  deps: FieldsEventDeps & {
    keys: { get(id: string): Promise<Pick<ApiKeyRecord, 'id' | 'merchantId' | 'mode'> | undefined> };
    /** BROWSER_ATTACK_COOLDOWN_SECONDS: the window the mark lasts. */
    windowSeconds: number;
    now: () => Date;
  },
): (keyId: string, attempts: number) => Promise<void> {
  return async (keyId, attempts) => {
    let key: Pick<ApiKeyRecord, 'id' | 'merchantId' | 'mode'> | undefined;
    try {
      key = await deps.keys.get(keyId);
    } catch (err) {
      deps.logger?.error({ type: 'card_testing.suspected', err: err instanceof Error ? err.message : 'unknown' }, 'event not recorded');
      deps.onFailure?.('card_testing.suspected');
      return;
    }
    if (key === undefined) return;
    const now = deps.now();
    const window = Math.floor(now.getTime() / (deps.windowSeconds * 1000));
    await emitEvent(
      deps.recorder,
      {
        type: 'card_testing.suspected',
        merchantId: key.merchantId,
        mode: key.mode,
        object: { keyId: key.id, attempts, windowSeconds: deps.windowSeconds },
        once: `card_testing.suspected:${key.id}:${window}`,
        now,
      },
      deps,
    );
  };
}
