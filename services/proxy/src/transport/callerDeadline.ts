import type { Logger } from '@tessera/common';

/**
 * Deadlines nest: a Forward may need the proxy's whole budget (PSP_CONNECT_TIMEOUT_MS +
 * VAULT_TIMEOUT_MS + PSP_TIMEOUT_MS), so the caller's deadline (the gateway's PROXY_TIMEOUT_MS)
 * must leave at least that much, or a slow PSP ends at the gateway's deadline (502
 * psp_outcome_unknown) instead of as the proxy's psp_timeout. No one service knows both settings, so
 * the proxy checks the deadline each call arrives with and says so once per process.
 */
export function callerDeadlineCheck(budgetMs: number, logger: Pick<Logger, 'warn'>): (deadline: Date | number) => void {
  let warned = false;
  return (deadline) => {
    if (warned) return;
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    if (!Number.isFinite(at) || at - Date.now() >= budgetMs) return;
    warned = true;
    logger.warn(
      { callerDeadlineMs: Math.round(at - Date.now()), budgetMs },
      "a caller's deadline (the gateway's PROXY_TIMEOUT_MS) is shorter than PSP_CONNECT_TIMEOUT_MS + VAULT_TIMEOUT_MS + PSP_TIMEOUT_MS: a slow PSP ends at the gateway's deadline instead of as psp_timeout",
    );
  };
}
