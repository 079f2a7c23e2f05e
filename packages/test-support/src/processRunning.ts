import fs from 'node:fs';

/**
 * Whether `pid` still runs: it answers signal 0 and is not a zombie (exited, its parent not yet
 * reaping). Node's modules only: the integration project's globalTeardown imports it too.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
