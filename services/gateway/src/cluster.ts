import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '@tessera/common';

export interface SupervisorOptions {
  workers: number;
  /** Workers get this long after SIGTERM to drain (their own drain deadline plus a margin). */
  stopGraceMs: number;
}

/**
 * The primary process of `GATEWAY_WORKERS` > 1: forks the workers, which all accept on the same
 * port (node:cluster hands connections out round-robin), and does no request work itself.
 *
 * A worker that dies after it was serving is replaced. A worker that dies before it ever
 * listened (bad config, unreachable port) would die again, so the primary stops everything and
 * exits 1 instead of looping, for the process supervisor to see. SIGTERM/SIGINT are passed on
 * to every worker, which drain as a single gateway does; the primary exits when all are gone.
 *
 * State is never shared in memory between workers: API keys, sessions and rate limits live in
 * Redis (config refuses GATEWAY_WORKERS > 1 without REDIS_URL), so a revocation is seen by
 * every worker on its next request.
 */
export function superviseWorkers(opts: SupervisorOptions, logger: Logger): void {
  let stopping = false;
  const everListened = new Set<number>();

  const fork = (): Worker => {
    const worker = cluster.fork();
    worker.once('listening', () => everListened.add(worker.id));
    return worker;
  };

  const stopAll = (exitCode: number): void => {
    if (stopping) return;
    stopping = true;
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    if (alive.length === 0) process.exit(exitCode);
    for (const worker of alive) worker.process.kill('SIGTERM');
    const force = setTimeout(() => {
      logger.warn('gateway workers did not stop in time; killing them');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(exitCode === 0 ? 1 : exitCode);
    }, opts.stopGraceMs);
    force.unref();
    cluster.on('exit', () => {
      if (Object.values(cluster.workers ?? {}).every((w) => w === undefined || w.isDead())) {
        logger.info({ exitCode }, 'gateway workers stopped');
        process.exit(exitCode);
      }
    });
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!everListened.has(worker.id)) {
      logger.error({ workerPid: worker.process.pid, code, signal }, 'gateway worker failed before it listened; stopping');
      stopAll(1);
      return;
    }
    logger.error({ workerPid: worker.process.pid, code, signal }, 'gateway worker died; starting a new one');
    fork();
  });

  for (let i = 0; i < opts.workers; i++) fork();
  logger.info({ workers: opts.workers }, 'gateway primary started its workers');
  process.on('SIGTERM', () => stopAll(0));
  process.on('SIGINT', () => stopAll(0));
}
