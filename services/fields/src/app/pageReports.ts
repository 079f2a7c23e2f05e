import type { KeyMode, Logger } from '@tessera/common';
import {
  applyPageReport,
  applyViolation,
  PAGE_INVENTORY_LIMITS,
  pageIdOf,
  parseCspReports,
  parsePageReport,
  type CspReportFormat,
  type CspViolation,
  type PageEvent,
  type ParsedViolation,
} from '@tessera/merchant-data';
import type { PageInventoryPort } from './ports';

/**
 * The SAQ A kit's intake (docs/browser.md, "SAQ A kit"): what tessera.js reports from a merchant's
 * payment page, and the CSP violation reports the page's browser sends. Both only ever add to the
 * merchant's page inventory; the dashboard shows it and operators authorize its scripts.
 */
export interface PageReportDeps {
  inventory: PageInventoryPort;
  now: () => Date;
  logger: Logger;
}

/** Whose page: the publishable key's merchant and mode. */
export interface ReportingKey {
  merchantId: string;
  mode: KeyMode;
  id: string;
}

export type PageReportOutcome = 'recorded' | 'page_limit';

/**
 * One page report, from `origin` (the Origin the browser sent, already checked against the key's
 * allowed origins). A merchant already at PAGE_INVENTORY_LIMITS.pagesPerMerchant pages gets no new
 * one (a hostile page inventing paths cannot fill Redis); its known pages are still updated.
 */
export async function recordPageReport(deps: PageReportDeps, key: ReportingKey, origin: string, body: unknown): Promise<PageReportOutcome> {
  const report = parsePageReport(body, origin);
  const id = pageIdOf(report.origin, report.path);
  const state = await deps.inventory.loadPage(key.merchantId, key.mode, id);
  if (state.page === undefined && state.pageCount >= PAGE_INVENTORY_LIMITS.pagesPerMerchant) {
    deps.logger.warn(
      { merchantId: key.merchantId, mode: key.mode, keyId: key.id },
      'page report of a new page dropped: the merchant is at its page limit',
    );
    return 'page_limit';
  }
  await deps.inventory.savePage(key.merchantId, key.mode, applyPageReport(state, report, deps.now()));
  return 'recorded';
}

/**
 * The violations of one CSP report POST, each on the page its document URL names, when that page's
 * origin is one the key allows (a report about another site's page is skipped: anyone can post to
 * this endpoint with a public key). Resolves to how many were kept.
 */
export async function recordCspViolations(
  deps: PageReportDeps,
  key: ReportingKey,
  allowsOrigin: (origin: string) => boolean,
  format: CspReportFormat,
  body: unknown,
): Promise<number> {
  const now = deps.now();
  const byPage = new Map<string, ParsedViolation[]>();
  for (const parsed of parseCspReports(format, body, now)) {
    if (!allowsOrigin(parsed.origin)) continue;
    const id = pageIdOf(parsed.origin, parsed.path);
    byPage.set(id, [...(byPage.get(id) ?? []), parsed]);
  }
  let kept = 0;
  for (const [id, reports] of byPage) {
    const state = await deps.inventory.loadPage(key.merchantId, key.mode, id);
    if (state.page === undefined && state.pageCount >= PAGE_INVENTORY_LIMITS.pagesPerMerchant) continue;
    let page = state.page;
    const events: PageEvent[] = [];
    const violations: CspViolation[] = [];
    for (const parsed of reports) {
      const next = applyViolation(page, parsed, now);
      page = next.page;
      events.push(...next.events);
      violations.push(parsed.violation);
    }
    if (page === undefined) continue;
    await deps.inventory.saveViolations(key.merchantId, key.mode, page, violations, events);
    kept += violations.length;
  }
  return kept;
}
