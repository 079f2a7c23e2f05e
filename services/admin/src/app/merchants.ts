import {
  type ApiKeyStore,
  type AuditLog,
  canonicalPspHostEntry,
  MAX_PSP_HOSTS,
  MERCHANT_ID_PATTERN,
  type MerchantSettings,
  type MerchantSettingsReader,
  type MerchantSettingsStore,
} from '@tessera/merchant-data';
import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import { canManageMerchant } from '../domain/operators';
import type { OperatorStore } from '../store/adminStores';
import { auditAs, type Caller } from './caller';
import { canonicalListSchema } from '@tessera/edge';

/**
 * Merchants as operators see them: which ones a caller may manage, and each one's PSP host
 * allowlist (enforced by the proxy on every /v1/proxy; empty: any public host). The admin API
 * and the keys CLI call these.
 */

export function merchantIdSchema() {
  return z
    .string({ error: '"merchantId" must be a string.' })
    .regex(MERCHANT_ID_PATTERN, { error: 'A merchant id is 1-64 letters, digits, "_", "." or "-".' });
}

/** `/merchants/{merchantId}/…` */
export const merchantPathSchema = z.object({ merchantId: merchantIdSchema() });

/** `?merchantId=`: platform operators may name one merchant; merchant operators get their own. */
export const merchantQuerySchema = z.object({
  merchantId: merchantIdSchema().optional().meta({ description: 'Platform operators: one merchant only (default: all).' }),
});

/** The merchant a request is about: the caller's own when none is named, or the one named if within reach. */
export function merchantInReach(caller: Caller, requested: string | undefined): string | undefined {
  if (requested === undefined) return caller.merchantId ?? undefined;
  if (!canManageMerchant(caller, requested)) throw new TesseraError('merchant_forbidden', { param: 'merchantId' });
  return requested;
}

/** A merchant operator's own merchant; for the others every merchant that has a key or an operator. */
export async function listMerchants(
  deps: { keyStore: Pick<ApiKeyStore, 'list'>; operators: Pick<OperatorStore, 'list'> },
  caller: Caller,
): Promise<string[]> {
  if (caller.merchantId !== null) return [caller.merchantId];
  const ids = new Set<string>();
  for (const key of await deps.keyStore.list()) ids.add(key.merchantId);
  for (const op of await deps.operators.list()) if (op.merchantId !== null) ids.add(op.merchantId);
  return [...ids].sort();
}

/** What a merchant list setting's use cases need; `M` the store methods they call. */
export interface SettingListDeps<M extends keyof MerchantSettingsStore> {
  merchantSettings: Pick<MerchantSettingsStore, 'get' | M>;
  audit: Pick<AuditLog, 'append'>;
  now: () => Date;
}
export type PspHostDeps = SettingListDeps<'setPspHosts'>;
export type PspHostsView = SettingListView<'pspHosts'>;

/** `label` names an entry in errors: the API's `PSP host`, or the CLI's words. */
export function pspHostsSchema(label = 'PSP host') {
  return z.strictObject({
    pspHosts: canonicalListSchema('pspHosts', MAX_PSP_HOSTS, canonicalPspHostEntry, label).meta({
      description: 'Host names, `*.example.com` wildcards (subdomains only) or IP literals; `[]` allows any public host again.',
    }),
  });
}

/**
 * A merchant's list settings (PSP hosts here, return URLs in returnUrls.ts) are read and replaced
 * alike: within the caller's reach, each replacement audited with the list before it.
 */
type SettingList = 'pspHosts' | 'returnUrls';
export type SettingListView<N extends SettingList> = { merchantId: string; updatedAt: string | null } & Record<N, string[]>;
const AUDITED_AS = {
  pspHosts: { action: 'merchant.psp_hosts_updated', previous: 'previousPspHosts' },
  returnUrls: { action: 'merchant.return_urls_updated', previous: 'previousReturnUrls' },
} as const;

export async function readSettingList<N extends SettingList>(
  deps: { merchantSettings: MerchantSettingsReader },
  caller: Caller,
  merchantId: string,
  name: N,
): Promise<SettingListView<N>> {
  merchantInReach(caller, merchantId);
  const settings = await deps.merchantSettings.get(merchantId);
  return { merchantId, [name]: settings?.[name] ?? [], updatedAt: settings?.updatedAt ?? null } as SettingListView<N>;
}

export async function replaceSettingList<N extends SettingList>(
  deps: { merchantSettings: MerchantSettingsReader; audit: Pick<AuditLog, 'append'>; now: () => Date },
  caller: Caller,
  merchantId: string,
  name: N,
  values: readonly string[],
  write: (merchantId: string, values: readonly string[], now: Date) => Promise<MerchantSettings>,
): Promise<SettingListView<N>> {
  merchantInReach(caller, merchantId);
  const before = (await deps.merchantSettings.get(merchantId))?.[name] ?? [];
  const settings = await write(merchantId, values, deps.now());
  const { action, previous } = AUDITED_AS[name];
  await auditAs(deps, caller, { action, merchantId, details: { [name]: [...values], [previous]: before } });
  return { merchantId, [name]: settings[name] ?? [], updatedAt: settings.updatedAt } as SettingListView<N>;
}

export function getPspHosts(deps: PspHostDeps, caller: Caller, merchantId: string): Promise<PspHostsView> {
  return readSettingList(deps, caller, merchantId, 'pspHosts');
}

/** Replaces the list (canonical entries); the proxy applies it from the next request on. Audited. */
export function setPspHosts(deps: PspHostDeps, caller: Caller, merchantId: string, pspHosts: readonly string[]): Promise<PspHostsView> {
  return replaceSettingList(deps, caller, merchantId, 'pspHosts', pspHosts, (id, hosts, at) =>
    deps.merchantSettings.setPspHosts(id, hosts, at),
  );
}
