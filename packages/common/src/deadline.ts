/**
 * `work`, or a rejection with `onTimeout()`'s error once `ms` have passed without it settling. The
 * timer is cleared as soon as either happens, so it never holds the process after the work is done.
 * The work is not cancelled, and its late outcome is dropped: a rejection after the deadline is never
 * left unhandled (the race listens to it).
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
