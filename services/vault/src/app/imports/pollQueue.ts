/**
 * The import workers' loop: every `pollIntervalMs` (and once soon after start) the ids `list`
 * answers, handled one at a time by `each`; a tick that finds the previous one still running skips.
 * A failure of one id is reported and the rest go on; it is tried again on a later tick.
 */
export function pollQueue(options: {
  pollIntervalMs: number;
  list: () => Promise<string[]>;
  each: (id: string) => Promise<void>;
  onError: (id: string, err: unknown) => void;
}): { stop(): Promise<void>; readonly stopped: boolean } {
  let stopped = false;
  let running: Promise<void> | undefined;
  const tick = (): void => {
    if (running !== undefined || stopped) return;
    running = (async () => {
      for (const id of await options.list()) {
        if (stopped) return;
        await options.each(id).catch((err: unknown) => options.onError(id, err));
      }
    })()
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.pollIntervalMs);
  timer.unref();
  const first = setTimeout(tick, Math.min(500, options.pollIntervalMs));
  first.unref();
  return {
    get stopped() {
      return stopped;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}
