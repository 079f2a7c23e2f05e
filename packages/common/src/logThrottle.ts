/** How often a repeating failure (a store down, a reconnect loop) is worth a log line: enough to notice, not a flood. */
export const REPEATED_FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * A gate for a log line that could repeat on every request or every reconnect attempt: true on the
 * first call, then again only once more than `intervalMs` has passed since the last true.
 */
export function createLogThrottle(intervalMs = REPEATED_FAILURE_LOG_INTERVAL_MS, now: () => number = Date.now): () => boolean {
  let lastLoggedAt: number | undefined;
  return () => {
    const at = now();
    if (lastLoggedAt !== undefined && at - lastLoggedAt <= intervalMs) return false;
    lastLoggedAt = at;
    return true;
  };
}
