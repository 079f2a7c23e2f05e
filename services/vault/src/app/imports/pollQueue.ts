import { repeatEvery, type RepeatedJob } from '@tessera/merchant-data';

/**
 * The import workers' loop: every `pollIntervalMs` (and once soon after start) the ids `list`
 * answers, handled one at a time by `each`. A failure of one id is reported and the rest go on;
 * it is tried again on a later tick.
 */
export function pollQueue(options: {
  pollIntervalMs: number;
  list: () => Promise<string[]>;
  each: (id: string) => Promise<void>;
  onError: (id: string, err: unknown) => void;
}): RepeatedJob {
  const job: RepeatedJob = repeatEvery({
    intervalMs: options.pollIntervalMs,
    firstAfterMs: 500,
    run: async () => {
      for (const id of await options.list()) {
        if (job.stopped) return;
        await options.each(id).catch((err: unknown) => options.onError(id, err));
      }
    },
    // A queue that cannot be read now is read again on the next tick.
    onError: () => undefined,
  });
  return job;
}
