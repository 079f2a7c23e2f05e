import { z } from 'zod';
import { TesseraError, type KeyMode } from '@tessera/common';
import { buildAuditRecord } from '../domain/admin/audit';
import { canManageMerchant } from '../domain/admin/operators';
import { formSigningSecret } from '../domain/formSessions';
import { canonicalReturnUrlEntry, MAX_RETURN_URLS } from '../domain/returnUrls';
import type { AuditLog } from '../store/adminStores';
import type { MerchantSettingsStore } from '../store/merchantSettingsStore';
import type { KeyCaller } from './apiKeys';
import { canonicalListSchema, parseInput } from './inputLists';

/**
 * The hosted payment page's return and cancel URLs, registered per merchant, and the secret that
 * signs the page's redirects: one use case each, called by the admin API (and so the dashboard)
 * and the keys CLI, like app/apiKeys.ts.
 */
export interface ReturnUrlDeps {
  merchantSettings: Pick<MerchantSettingsStore, 'get' | 'setReturnUrls'>;
  audit: Pick<AuditLog, 'append'>;
  pepper: string;
  now: () => Date;
}

export interface ReturnUrlsView {
  merchantId: string;
  returnUrls: string[];
  updatedAt: string | null;
}

function checkReach(caller: KeyCaller, merchantId: string): void {
  if (!canManageMerchant(caller, merchantId)) throw new TesseraError('merchant_forbidden', { param: 'merchantId' });
}

/** `label` names an entry in errors: the API's `Return URL`, the CLI's own words. */
export function returnUrlsSchema(label = 'Return URL') {
  return z.strictObject({
    returnUrls: canonicalListSchema('returnUrls', MAX_RETURN_URLS, canonicalReturnUrlEntry, label).meta({
      description:
        'Every return and cancel URL form sessions may use: scheme, host, optional port and path (no query, fragment or credentials). ' +
        'A session URL must match one exactly; it may add a query. [] removes them all.',
    }),
  });
}

/** Showing the signing secret names the mode whose secret is shown. */
export const formSigningSecretRequestSchema = z.strictObject({
  mode: z.enum(['test', 'live'], { error: '"mode" must be "test" or "live".' }),
});

/** The list as given: canonical, de-duplicated, or a 400 naming the bad entry. */
export function parseReturnUrls(raw: Record<string, unknown>, label?: string): string[] {
  return parseInput(returnUrlsSchema(label), raw).returnUrls;
}

export async function getReturnUrls(deps: ReturnUrlDeps, caller: KeyCaller, merchantId: string): Promise<ReturnUrlsView> {
  checkReach(caller, merchantId);
  const settings = await deps.merchantSettings.get(merchantId);
  return { merchantId, returnUrls: settings?.returnUrls ?? [], updatedAt: settings?.updatedAt ?? null };
}

/** Replaces the list; sessions created from now on are checked against it (open ones keep their URL). */
export async function setReturnUrls(
  deps: ReturnUrlDeps,
  caller: KeyCaller,
  merchantId: string,
  returnUrls: readonly string[],
): Promise<ReturnUrlsView> {
  checkReach(caller, merchantId);
  const before = (await deps.merchantSettings.get(merchantId))?.returnUrls ?? [];
  const settings = await deps.merchantSettings.setReturnUrls(merchantId, returnUrls, deps.now());
  await deps.audit.append(
    buildAuditRecord({
      action: 'merchant.return_urls_updated',
      actor: caller.actor,
      ip: caller.ip,
      merchantId,
      details: { returnUrls: [...returnUrls], previousReturnUrls: before },
      now: deps.now(),
    }),
  );
  return { merchantId, returnUrls: settings.returnUrls ?? [], updatedAt: settings.updatedAt };
}

/** The secret the merchant's server verifies return signatures with (per merchant and mode); showing it is audited. */
export async function showFormSigningSecret(
  deps: ReturnUrlDeps,
  caller: KeyCaller,
  merchantId: string,
  mode: KeyMode,
): Promise<{ merchantId: string; mode: KeyMode; signingSecret: string }> {
  checkReach(caller, merchantId);
  await deps.audit.append(
    buildAuditRecord({
      action: 'merchant.form_signing_secret_shown',
      actor: caller.actor,
      ip: caller.ip,
      merchantId,
      details: { mode },
      now: deps.now(),
    }),
  );
  return { merchantId, mode, signingSecret: formSigningSecret(deps.pepper, merchantId, mode) };
}
