import { z } from 'zod';
import { TesseraError } from '@tessera/common';
import { buildAuditRecord } from '../domain/admin/audit';
import { canManageMerchant } from '../domain/admin/operators';
import { MERCHANT_ID_PATTERN } from '../domain/apiKeys';
import { canonicalPspHostEntry, MAX_PSP_HOSTS } from '../domain/pspHosts';
import type { AuditLog, OperatorStore } from '../store/adminStores';
import type { ApiKeyStore } from '../store/apiKeyStore';
import type { MerchantSettingsStore } from '../store/merchantSettingsStore';
import type { Caller } from './caller';
import { canonicalListSchema } from './inputLists';

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

export interface PspHostDeps {
  merchantSettings: Pick<MerchantSettingsStore, 'get' | 'setPspHosts'>;
  audit: Pick<AuditLog, 'append'>;
  now: () => Date;
}

export interface PspHostsView {
  merchantId: string;
  pspHosts: string[];
  updatedAt: string | null;
}

/** `label` names an entry in errors: the API's `PSP host`, or the CLI's words. */
export function pspHostsSchema(label = 'PSP host') {
  return z.strictObject({
    pspHosts: canonicalListSchema('pspHosts', MAX_PSP_HOSTS, canonicalPspHostEntry, label).meta({
      description: 'Host names, `*.example.com` wildcards (subdomains only) or IP literals; `[]` allows any public host again.',
    }),
  });
}

export async function getPspHosts(deps: PspHostDeps, caller: Caller, merchantId: string): Promise<PspHostsView> {
  merchantInReach(caller, merchantId);
  const settings = await deps.merchantSettings.get(merchantId);
  return { merchantId, pspHosts: settings?.pspHosts ?? [], updatedAt: settings?.updatedAt ?? null };
}

/** Replaces the list (canonical entries); the proxy applies it from the next request on. Audited. */
export async function setPspHosts(
  deps: PspHostDeps,
  caller: Caller,
  merchantId: string,
  pspHosts: readonly string[],
): Promise<PspHostsView> {
  merchantInReach(caller, merchantId);
  const before = (await deps.merchantSettings.get(merchantId))?.pspHosts ?? [];
  const settings = await deps.merchantSettings.setPspHosts(merchantId, pspHosts, deps.now());
  await deps.audit.append(
    buildAuditRecord({
      action: 'merchant.psp_hosts_updated',
      actor: caller.actor,
      ip: caller.ip,
      merchantId,
      details: { pspHosts: [...pspHosts], previousPspHosts: before },
      now: deps.now(),
    }),
  );
  return { merchantId, pspHosts: settings.pspHosts, updatedAt: settings.updatedAt };
}
