import type { Logger } from '@tessera/common';
import { type ApiKeyStore, buildApiKeyRecord, hashApiKey } from '@tessera/merchant-data';

export interface DevKeyRegistration {
  /** True once the key is in the store (/readyz is not ready before). */
  readonly registered: boolean;
  /** Settles after the first attempt, whatever its outcome (later attempts go on in the background). */
  readonly firstAttempt: Promise<void>;
  /** Registers again now (Redis reconnected, possibly empty); a no-op while an attempt is pending. */
  again(): void;
  /** Stops retrying (shutdown). */
  stop(): void;
}

export interface DevKeyOptions {
  keyStore: ApiKeyStore;
  apiKey: string;
  pepper: string;
  logger: Logger;
  /** First wait after a failure, doubled after each further one up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/** One attempt: the documented quick-start key becomes a test key of merchant `dev`, once. */
async function registerOnce({ keyStore, apiKey, pepper, logger }: DevKeyOptions): Promise<void> {
  const existing = await keyStore.findByDigest(hashApiKey(pepper, apiKey));
  if (existing) {
    if (existing.revokedAt !== undefined) logger.warn({ keyId: existing.id }, 'TESSERA_DEV_API_KEY was revoked; it stays revoked');
    return;
  }
  const record = buildApiKeyRecord(apiKey, { merchantId: 'dev', mode: 'test', allowedCidrs: [], pepper, now: new Date() });
  const created = await keyStore.create(record);
  if (created) logger.warn({ keyId: record.id, merchantId: 'dev' }, 'registered TESSERA_DEV_API_KEY as a test key (development only)');
}

/**
 * Registers TESSERA_DEV_API_KEY and keeps trying, with exponential backoff, until the store
 * takes it. A store that is up but refuses writes (NOREPLICAS, READONLY, OOM) never causes a
 * reconnect, so waiting for one is not enough; meanwhile every request with the key would be a
 * 401, and soon a 429 from the failed-authentication limit.
 */
export function registerDevKey(opts: DevKeyOptions): DevKeyRegistration {
  const initialDelayMs = opts.initialDelayMs ?? 250;
  const maxDelayMs = opts.maxDelayMs ?? 5_000;
  let registered = false;
  let pending = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const attempt = async (delayMs: number, failures: number): Promise<void> => {
    timer = undefined;
    if (stopped) return;
    pending = true;
    try {
      await registerOnce(opts);
      registered = true;
      pending = false;
      if (failures > 0) opts.logger.info({ failures }, 'TESSERA_DEV_API_KEY registered after retrying');
    } catch (err) {
      // The first failure in full; then one line per attempt, which backoff keeps rare.
      if (failures === 0) opts.logger.error({ err }, 'could not register TESSERA_DEV_API_KEY; retrying (/readyz reports not ready)');
      else opts.logger.warn({ failures: failures + 1, retryInMs: delayMs }, 'could not register TESSERA_DEV_API_KEY yet');
      if (stopped) return;
      timer = setTimeout(() => void attempt(Math.min(delayMs * 2, maxDelayMs), failures + 1), delayMs);
      timer.unref();
    }
  };

  const firstAttempt = attempt(initialDelayMs, 0);
  return {
    get registered() {
      return registered;
    },
    firstAttempt,
    again() {
      if (pending && timer === undefined) return; // an attempt is running right now
      if (timer !== undefined) clearTimeout(timer);
      void attempt(initialDelayMs, 0);
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
