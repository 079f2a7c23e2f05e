import { z } from 'zod';
import { TesseraError, type KeyMode } from '@tessera/common';
import {
  PAGE_ID_PATTERN,
  policyWeakenings,
  type AuditLog,
  type CspViolation,
  type PageEvent,
  type PageInventoryReader,
  type PageRecord,
  type PolicyAcceptance,
  type ScriptAuthorization,
  type ScriptAuthorizationStore,
  type ScriptRecord,
} from '@tessera/merchant-data';
import { parseInput } from '@tessera/edge';
import { recommendedPagePolicy, type PagePolicy } from '../domain/pagePolicy';
import { auditAs, type Caller } from './caller';
import { merchantInReach } from './merchants';

/**
 * The SAQ A kit, operators' side (docs/dashboard.md, "Payment pages"): what a merchant's payment
 * page should send, the inventory of the scripts its pages ran (reported by tessera.js, kept by the
 * fields service), the authorization of each script with its justification (PCI DSS 6.4.3), the
 * changes flagged (11.6.1), and the evidence exported. Called by the admin API and the keys CLI.
 */
export interface PageInventoryDeps {
  inventory: PageInventoryReader;
  authorizations: ScriptAuthorizationStore;
  audit: Pick<AuditLog, 'append'>;
  now: () => Date;
}

export interface PagePolicyDeps {
  /** FIELDS_ORIGIN as the admin service knows it; undefined: not configured. */
  fieldsOrigin: string | undefined;
  tesseraJsIntegrity: string | undefined;
}

/** `authorized`: an operator authorized this very hash; `changed`: its hash differs from the one authorized or first seen; `new`: never authorized. */
export type ScriptStatus = 'authorized' | 'changed' | 'new';

export interface ScriptView extends ScriptRecord {
  status: ScriptStatus;
  /** No integrity attribute and not fetchable (cross-origin): only its URL is known. */
  unhashable: boolean;
  authorization: ScriptAuthorization | null;
}

export interface PageView extends PageRecord {
  url: string;
  /** The meta policy changes are judged against: the one an operator accepted, else the first seen. */
  baselinePolicy: string | null;
  /** The same for the header policy (seen through CSP violation reports). */
  baselineHeaderPolicy: string | null;
  policyAcceptance: PolicyAcceptance | null;
  /** How the page's current meta and header policies are weaker than their baselines; empty: not weaker. */
  policyWeakenings: string[];
  flags: { newScripts: number; changedScripts: number; policyWeakened: boolean };
  flagged: boolean;
  scripts: ScriptView[];
  events: PageEvent[];
  violations: CspViolation[];
}

export interface PageInventoryView {
  merchantId: string;
  mode: KeyMode;
  pages: PageView[];
}

const modeSchema = z.enum(['test', 'live'], { error: '"mode" must be "test" or "live".' });
const pageIdSchema = z.string().regex(PAGE_ID_PATTERN, { error: '"pageId" is a page id from the inventory (16 hex digits).' });
const justificationSchema = z
  .string({ error: '"justification" is required: why the page needs it (PCI DSS 6.4.3).' })
  .trim()
  .min(3, { error: '"justification" is required: why the page needs it (PCI DSS 6.4.3).' })
  .max(500, { error: '"justification" is at most 500 characters.' });

export const pageInventoryQuerySchema = z.strictObject({ mode: modeSchema.default('test') });
export const pageInventoryExportQuerySchema = z.strictObject({
  mode: modeSchema.default('test'),
  format: z.enum(['json', 'csv'], { error: '"format" must be "json" or "csv".' }).default('json'),
});
export const pagePolicyQuerySchema = z.strictObject({
  mode: modeSchema.default('test'),
  key: z
    .string()
    .regex(/^tpk_(test|live)_[0-9A-Za-z]{38}$/, { error: '"key" must be a publishable key (tpk_…).' })
    .optional()
    .meta({ description: 'The publishable key to name in the report URL; default: a placeholder.' }),
});
export const scriptAuthorizationSchema = z.strictObject({
  mode: modeSchema,
  pageId: pageIdSchema,
  scriptKey: z.string().min(1).max(1200).meta({ description: 'The script’s `key` in the inventory (its URL, or `inline:sha256-…`).' }),
  justification: justificationSchema,
});
export const policyAcceptanceSchema = z.strictObject({ mode: modeSchema, pageId: pageIdSchema, justification: justificationSchema });

export type ScriptAuthorizationInput = z.output<typeof scriptAuthorizationSchema>;
export type PolicyAcceptanceInput = z.output<typeof policyAcceptanceSchema>;

export const parseScriptAuthorization = (raw: Record<string, unknown>): ScriptAuthorizationInput =>
  parseInput(scriptAuthorizationSchema, raw);
export const parsePolicyAcceptance = (raw: Record<string, unknown>): PolicyAcceptanceInput => parseInput(policyAcceptanceSchema, raw);

export function scriptStatusOf(script: ScriptRecord, authorization: ScriptAuthorization | undefined): ScriptStatus {
  if (authorization !== undefined) return authorization.hash === script.hash ? 'authorized' : 'changed';
  return script.changedAt !== null ? 'changed' : 'new';
}

const EVENTS_SHOWN = 50;
const VIOLATIONS_SHOWN = 50;

async function pageViewOf(
  deps: PageInventoryDeps,
  merchantId: string,
  mode: KeyMode,
  page: PageRecord,
  counts = { events: EVENTS_SHOWN, violations: VIOLATIONS_SHOWN },
): Promise<PageView> {
  const [detail, authorizations] = await Promise.all([
    deps.inventory.pageDetail(merchantId, mode, page.id, counts),
    deps.authorizations.forPage(merchantId, mode, page.id),
  ]);
  const scripts: ScriptView[] = detail.scripts.map((script) => {
    const authorization = authorizations.scripts.get(script.key);
    return {
      ...script,
      status: scriptStatusOf(script, authorization),
      unhashable: script.hash === null,
      authorization: authorization ?? null,
    };
  });
  const present = scripts.filter((s) => s.present);
  const accepted = authorizations.policy;
  const baselinePolicy = accepted !== undefined ? accepted.policy : page.firstPolicy;
  const baselineHeaderPolicy = accepted?.headerPolicy !== undefined ? accepted.headerPolicy : (page.firstHeaderPolicy ?? null);
  const weakenings = [
    ...policyWeakenings(baselinePolicy, page.policy),
    // The header as violation reports carry it: only a policy seen again can be compared.
    ...(page.headerPolicy === null ? [] : policyWeakenings(baselineHeaderPolicy, page.headerPolicy).map((w) => `Header: ${w}`)),
  ];
  const flags = {
    newScripts: present.filter((s) => s.status === 'new').length,
    changedScripts: present.filter((s) => s.status === 'changed').length,
    policyWeakened: weakenings.length > 0,
  };
  return {
    ...page,
    url: `${page.origin}${page.path}`,
    baselinePolicy,
    baselineHeaderPolicy,
    policyAcceptance: authorizations.policy ?? null,
    policyWeakenings: weakenings,
    flags,
    flagged: flags.newScripts + flags.changedScripts > 0 || flags.policyWeakened,
    scripts,
    events: detail.events,
    violations: detail.violations,
  };
}

function merchantOf(caller: Caller, merchantId: string): string {
  return merchantInReach(caller, merchantId) as string;
}

/** Every page of the merchant in that mode, with its scripts, flags, latest events and violations. */
export async function getPageInventory(
  deps: PageInventoryDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
): Promise<PageInventoryView> {
  const merchant = merchantOf(caller, merchantId);
  const pages = await deps.inventory.listPages(merchant, mode);
  return { merchantId: merchant, mode, pages: await Promise.all(pages.map((page) => pageViewOf(deps, merchant, mode, page))) };
}

async function pageOf(deps: PageInventoryDeps, merchantId: string, mode: KeyMode, pageId: string): Promise<PageRecord> {
  const page = (await deps.inventory.listPages(merchantId, mode)).find((p) => p.id === pageId);
  if (page === undefined) throw new TesseraError('page_script_not_found', { param: 'pageId' });
  return page;
}

/**
 * Authorizes the script as it is now (its current hash; a later change makes it `changed` again),
 * with the operator's justification; audited. Resolves to the page as the dashboard shows it.
 */
export async function authorizePageScript(
  deps: PageInventoryDeps,
  caller: Caller,
  merchantId: string,
  input: ScriptAuthorizationInput,
): Promise<PageView> {
  const merchant = merchantOf(caller, merchantId);
  const page = await pageOf(deps, merchant, input.mode, input.pageId);
  const detail = await deps.inventory.pageDetail(merchant, input.mode, page.id, { events: 0, violations: 0 });
  const script = detail.scripts.find((s) => s.key === input.scriptKey);
  if (script === undefined) throw new TesseraError('page_script_not_found', { param: 'scriptKey' });
  const at = deps.now().toISOString();
  await deps.authorizations.authorizeScript(merchant, input.mode, page.id, {
    scriptKey: script.key,
    hash: script.hash,
    justification: input.justification,
    by: caller.actor.email,
    at,
  });
  await auditAs(deps, caller, {
    action: 'page.script_authorized',
    merchantId: merchant,
    details: {
      mode: input.mode,
      page: `${page.origin}${page.path}`,
      script: script.url ?? script.key,
      hash: script.hash,
      justification: input.justification,
    },
  });
  return pageViewOf(deps, merchant, input.mode, page);
}

/** Accepts the page's current meta and header policies as its baseline (a deliberate change), with a justification; audited. */
export async function acceptPagePolicy(
  deps: PageInventoryDeps,
  caller: Caller,
  merchantId: string,
  input: PolicyAcceptanceInput,
): Promise<PageView> {
  const merchant = merchantOf(caller, merchantId);
  const page = await pageOf(deps, merchant, input.mode, input.pageId);
  await deps.authorizations.acceptPolicy(merchant, input.mode, page.id, {
    policy: page.policy,
    headerPolicy: page.headerPolicy,
    justification: input.justification,
    by: caller.actor.email,
    at: deps.now().toISOString(),
  });
  await auditAs(deps, caller, {
    action: 'page.policy_accepted',
    merchantId: merchant,
    details: { mode: input.mode, page: `${page.origin}${page.path}`, justification: input.justification },
  });
  return pageViewOf(deps, merchant, input.mode, page);
}

export interface PageInventoryExport {
  merchantId: string;
  mode: KeyMode;
  exportedAt: string;
  exportedBy: string;
  pages: PageView[];
}

/** RFC 4180 field: quoted when it holds a comma, quote or line break; a leading =+-@ is defused for spreadsheets. */
function csvField(value: string | number | boolean | null): string {
  let text = value === null ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const PAGE_INVENTORY_CSV_COLUMNS = [
  'page',
  'script',
  'inline',
  'hash',
  'hash_source',
  'status',
  'present',
  'first_seen',
  'last_seen',
  'changed_at',
  'authorized_by',
  'authorized_at',
  'justification',
] as const;

/** One row per script of every page (the 6.4.3 inventory), for a spreadsheet. */
export function pageInventoryCsv(evidence: PageInventoryExport): string {
  const rows = [PAGE_INVENTORY_CSV_COLUMNS.join(',')];
  for (const page of evidence.pages) {
    for (const s of page.scripts) {
      rows.push(
        [
          page.url,
          s.url ?? s.key,
          s.inline,
          s.hash,
          s.hashSource,
          s.status,
          s.present,
          s.firstSeenAt,
          s.lastSeenAt,
          s.changedAt,
          s.authorization?.by ?? null,
          s.authorization?.at ?? null,
          s.authorization?.justification ?? null,
        ]
          .map(csvField)
          .join(','),
      );
    }
  }
  return `${rows.join('\r\n')}\r\n`;
}

/**
 * The evidence for an assessor: every page with its scripts and their authorizations, the whole
 * kept history of changes and violations; the export itself is audited.
 */
export async function exportPageInventory(
  deps: PageInventoryDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
): Promise<PageInventoryExport> {
  const merchant = merchantOf(caller, merchantId);
  const pages = await deps.inventory.listPages(merchant, mode);
  const all = { events: 10_000, violations: 10_000 };
  const views = await Promise.all(pages.map((page) => pageViewOf(deps, merchant, mode, page, all)));
  await auditAs(deps, caller, { action: 'page.inventory_exported', merchantId: merchant, details: { mode, pages: views.length } });
  return { merchantId: merchant, mode, exportedAt: deps.now().toISOString(), exportedBy: caller.actor.email, pages: views };
}

/** The headers and script line a merchant's payment page should send (domain/pagePolicy.ts). */
export function pagePolicyFor(
  deps: PagePolicyDeps,
  caller: Caller | undefined,
  merchantId: string,
  mode: KeyMode,
  key?: string,
): PagePolicy & { merchantId: string; mode: KeyMode } {
  const merchant = caller === undefined ? merchantId : merchantOf(caller, merchantId);
  if (deps.fieldsOrigin === undefined) {
    throw new TesseraError('service_unavailable', {
      message: 'FIELDS_ORIGIN is not set for the admin service: the fields origin is not known.',
    });
  }
  const policy = recommendedPagePolicy({
    fieldsOrigin: deps.fieldsOrigin,
    tesseraJsIntegrity: deps.tesseraJsIntegrity,
    publishableKey: key ?? `tpk_${mode}_…`,
  });
  return { merchantId: merchant, mode, ...policy };
}
