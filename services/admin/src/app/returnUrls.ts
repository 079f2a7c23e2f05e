import { z } from 'zod';
import type { KeyMode } from '@tessera/common';
import { formSigningSecret } from '@tessera/merchant-data';
import { canonicalReturnUrlEntry, MAX_RETURN_URLS } from '@tessera/merchant-data';
import { auditAs, type Caller } from './caller';
import { merchantInReach, readSettingList, replaceSettingList, type SettingListDeps, type SettingListView } from './merchants';
import { canonicalListSchema, parseInput } from '@tessera/edge';

/**
 * The hosted payment page's return and cancel URLs, registered per merchant, and the secret that
 * signs the page's redirects: one use case each, called by the admin API (and so the dashboard)
 * and the keys CLI, like app/apiKeys.ts.
 */
export interface ReturnUrlDeps extends SettingListDeps<'setReturnUrls'> {
  pepper: string;
}

export type ReturnUrlsView = SettingListView<'returnUrls'>;

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

export function getReturnUrls(deps: ReturnUrlDeps, caller: Caller, merchantId: string): Promise<ReturnUrlsView> {
  return readSettingList(deps, caller, merchantId, 'returnUrls');
}

/** Replaces the list; sessions created from now on are checked against it (open ones keep their URL). */
export function setReturnUrls(
  deps: ReturnUrlDeps,
  caller: Caller,
  merchantId: string,
  returnUrls: readonly string[],
): Promise<ReturnUrlsView> {
  return replaceSettingList(deps, caller, merchantId, 'returnUrls', returnUrls, (id, urls, at) =>
    deps.merchantSettings.setReturnUrls(id, urls, at),
  );
}

/** The secret the merchant's server verifies return signatures with (per merchant and mode); showing it is audited. */
export async function showFormSigningSecret(
  deps: ReturnUrlDeps,
  caller: Caller,
  merchantId: string,
  mode: KeyMode,
): Promise<{ merchantId: string; mode: KeyMode; signingSecret: string }> {
  merchantInReach(caller, merchantId);
  await auditAs(deps, caller, { action: 'merchant.form_signing_secret_shown', merchantId, details: { mode } });
  return { merchantId, mode, signingSecret: formSigningSecret(deps.pepper, merchantId, mode) };
}
