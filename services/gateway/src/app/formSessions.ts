import { z } from 'zod';
import { TesseraError, type KeyMode } from '@tessera/common';
import { type ApiKeyRecord, checkReturnUrl, MAX_RETURN_URL_LENGTH, type MerchantSettingsReader } from '@tessera/merchant-data';
import {
  FORM_SESSION_ID_PATTERN,
  formSessionStatus,
  newCsrfToken,
  newFormSessionId,
  type FormSessionRecord,
  type FormSessionResult,
  type FormSessionStatus,
} from '@tessera/merchant-data';
import type { FormSessionStore } from '@tessera/merchant-data';
import { parseInput } from '@tessera/edge';

/**
 * The hosted payment page's sessions as a merchant's server opens and reads them (secret key,
 * /v1/form-sessions). The shopper's browser loads, submits or cancels the page on the fields
 * service (/pay/{id}); transport only parses and answers.
 */
export interface FormSessionDeps {
  sessions: FormSessionStore;
  merchantSettings: MerchantSettingsReader;
  /** FIELDS_ORIGIN: the page's URL is `${fieldsOrigin}/pay/{id}`. */
  fieldsOrigin: string;
  ttlSeconds: number;
  now: () => Date;
}

export const createFormSessionSchema = z.strictObject({
  returnUrl: z
    .string({ error: '"returnUrl" must be a string.' })
    .max(MAX_RETURN_URL_LENGTH, { error: `"returnUrl" must be at most ${MAX_RETURN_URL_LENGTH} characters.` })
    .meta({
      description:
        'Where the shopper is sent (303) after the card is tokenized. Must be written canonically and match a registered return URL ' +
        'exactly (scheme, host, port, path); a query is allowed and kept. https for live keys.',
    }),
  cancelUrl: z
    .string({ error: '"cancelUrl" must be a string.' })
    .max(MAX_RETURN_URL_LENGTH, { error: `"cancelUrl" must be at most ${MAX_RETURN_URL_LENGTH} characters.` })
    .optional()
    .meta({ description: 'Where the page’s Cancel link sends the shopper; same rules as returnUrl. Without it there is no Cancel link.' }),
});

export interface FormSessionJson {
  id: string;
  object: 'form_session';
  status: FormSessionStatus;
  url: string;
  returnUrl: string;
  cancelUrl: string | null;
  createdAt: string;
  expiresAt: string;
  completedAt: string | null;
  /** Set once the session is completed: the (provisional) token and the card's public details. */
  token: string | null;
  card: FormSessionResult['card'] | null;
}

export function formSessionJson(record: FormSessionRecord, fieldsOrigin: string, now: Date): FormSessionJson {
  const status = formSessionStatus(record, now);
  return {
    id: record.id,
    object: 'form_session',
    status,
    url: pageUrlOf(fieldsOrigin, record.id),
    returnUrl: record.returnUrl,
    cancelUrl: record.cancelUrl,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    completedAt: record.status === 'completed' ? record.finishedAt : null,
    token: record.result?.token ?? null,
    card: record.result?.card ?? null,
  };
}

export function pageUrlOf(fieldsOrigin: string, id: string): string {
  return `${fieldsOrigin}/pay/${id}`;
}

function checkedUrl(raw: string, registered: readonly string[], mode: KeyMode, param: 'returnUrl' | 'cancelUrl'): string {
  const check = checkReturnUrl(raw, registered, mode);
  if (!check.ok) throw new TesseraError('return_url_not_registered', { param, message: `"${param}" ${check.message}.` });
  return check.url;
}

/** POST /v1/form-sessions: a secret key opens a session for its merchant and mode. */
export async function createFormSession(
  deps: FormSessionDeps,
  key: ApiKeyRecord,
  raw: Record<string, unknown>,
): Promise<FormSessionRecord> {
  const input = parseInput(createFormSessionSchema, raw);
  const registered = (await deps.merchantSettings.get(key.merchantId))?.returnUrls ?? [];
  const returnUrl = checkedUrl(input.returnUrl, registered, key.mode, 'returnUrl');
  const cancelUrl = input.cancelUrl === undefined ? null : checkedUrl(input.cancelUrl, registered, key.mode, 'cancelUrl');
  const now = deps.now();
  const record: FormSessionRecord = {
    id: newFormSessionId(),
    merchantId: key.merchantId,
    mode: key.mode,
    keyId: key.id,
    returnUrl,
    cancelUrl,
    csrfToken: newCsrfToken(),
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + deps.ttlSeconds * 1000).toISOString(),
    status: 'open',
    finishedAt: null,
    result: null,
  };
  await deps.sessions.create(record);
  return record;
}

/** A session of another merchant or mode is answered like an unknown one (existence is not revealed). */
export async function getFormSession(
  deps: FormSessionDeps,
  key: Pick<ApiKeyRecord, 'merchantId' | 'mode'>,
  id: string,
): Promise<FormSessionRecord> {
  const record = FORM_SESSION_ID_PATTERN.test(id) ? await deps.sessions.get(id) : undefined;
  if (record === undefined || record.merchantId !== key.merchantId || record.mode !== key.mode)
    throw new TesseraError('form_session_not_found');
  return record;
}
