/**
 * Calls `shutdown` on the first SIGTERM or SIGINT only: a second signal while a service drains
 * (an impatient operator, an orchestrator repeating its SIGTERM) must not start a second shutdown.
 */
export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => void): void {
  let stopping = false;
  const once = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    shutdown(signal);
  };
  process.on('SIGTERM', () => once('SIGTERM'));
  process.on('SIGINT', () => once('SIGINT'));
}
