import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full GC before it runs
 * the next one: 100 = up to twice the live heap.
 *
 * V8's own choice on a machine with plenty of RAM is up to 4x. Under load each service keeps only
 * ~15-25 MB alive, but requests in flight outlive young-generation collections and are promoted,
 * so with 4x the old generation filled with dead requests up to ~100 MB before it was collected:
 * 150-195 MB RSS per service under the bench's load. At 2x the peak is ~115-140 MB. The price is
 * about twice as many full GCs: at saturation ~10-20 % more gateway CPU per request (concurrent
 * marking on V8's worker threads), at moderate load within noise. The young generation is left
 * at V8's size: its collections already cost more than the full ones, and a smaller one makes
 * every request pay for more of them.
 */
export const HEAP_GROWING_PERCENT = 100;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Applies HEAP_GROWING_PERCENT to this process, unless the operator chose a value on the node
 * command line (`node --heap-growing-percent=N main.js`; 0 restores V8's own heuristic). It is set
 * at run time, from each service's entry point, because that is the one place every launcher
 * (npm start, the bench, the integration harness, Docker, Kubernetes) goes through, and because
 * NODE_OPTIONS may not carry this flag. V8 reads it at every full GC, so setting it after start-up
 * is enough. Returns whether it was applied.
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  setFlags: (flags: string) => void = (flags) => v8.setFlagsFromString(flags),
): boolean {
  if (execArgv.some((arg) => FLAG.test(arg))) return false;
  setFlags(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
