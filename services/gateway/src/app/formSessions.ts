import { z } from 'zod';
import { TesseraError, type KeyMode } from '@tessera/common';
import { type ApiKeyRecord, checkReturnUrl, MAX_RETURN_URL_LENGTH, type MerchantSettingsReader } from '@tessera/merchant-data';
import {
  DEFAULT_DISPLAY,
  FORM_SESSION_ID_PATTERN,
  formSessionStatus,
  isCurrency,
  newCsrfToken,
  newFormSessionId,
  PAGE_LOCALES,
  type FormSessionPayment,
  type FormSessionRecord,
  type FormSessionResult,
  type FormSessionStatus,
  type PageLocale,
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

/** Large enough for any real charge (in minor units), small enough to stay an exact JSON number everywhere. */
const MAX_AMOUNT = 99_999_999_999;
const MAX_MERCHANT_NAME_LENGTH = 80;
const MAX_SUBMIT_LABEL_LENGTH = 40;
// eslint-disable-next-line no-control-regex -- display text must be plain one-line text
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

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
  amount: z
    .int({ error: '"amount" must be an integer in the currency’s minor unit (cents).' })
    .min(1, { error: '"amount" must be greater than 0.' })
    .max(MAX_AMOUNT, { error: `"amount" must be at most ${MAX_AMOUNT}.` })
    .optional()
    .meta({ description: 'In the currency’s minor unit (1234 is €12.34). Shown on the page; given with currency.' }),
  currency: z
    .string({ error: '"currency" must be a string.' })
    .refine(isCurrency, { error: '"currency" must be an ISO 4217 code in lower case, such as "eur" or "usd".' })
    .optional()
    .meta({ description: 'ISO 4217, lower case (eur, usd, jpy…). Required with amount.' }),
  completionUrl: z
    .string({ error: '"completionUrl" must be a string.' })
    .max(MAX_RETURN_URL_LENGTH, { error: `"completionUrl" must be at most ${MAX_RETURN_URL_LENGTH} characters.` })
    .optional()
    .meta({
      description:
        'The merchant’s endpoint Tessera calls server to server with each card before the redirect, to charge it (docs/api.md, ' +
        '"The completion call"). Same rules as returnUrl (a registered URL). Needs amount and currency. Without it the page only collects the card.',
    }),
  merchantName: z
    .string({ error: '"merchantName" must be a string.' })
    .trim()
    .min(1, { error: '"merchantName" must not be empty.' })
    .max(MAX_MERCHANT_NAME_LENGTH, { error: `"merchantName" must be at most ${MAX_MERCHANT_NAME_LENGTH} characters.` })
    .refine((v) => !CONTROL_CHARACTERS.test(v), { error: '"merchantName" must be one line of text.' })
    .optional()
    .meta({ description: 'Shown in the page’s header and in its "Return to …" links.' }),
  logoUrl: z
    .string({ error: '"logoUrl" must be a string.' })
    .max(MAX_RETURN_URL_LENGTH, { error: `"logoUrl" must be at most ${MAX_RETURN_URL_LENGTH} characters.` })
    .optional()
    .meta({
      description:
        'An image shown in the header (https; http only with test keys). The page allows images from this origin only and sends no Referer.',
    }),
  submitLabel: z
    .string({ error: '"submitLabel" must be a string.' })
    .trim()
    .min(1, { error: '"submitLabel" must not be empty.' })
    .max(MAX_SUBMIT_LABEL_LENGTH, { error: `"submitLabel" must be at most ${MAX_SUBMIT_LABEL_LENGTH} characters.` })
    .refine((v) => !CONTROL_CHARACTERS.test(v), { error: '"submitLabel" must be one line of text.' })
    .optional()
    .meta({ description: 'The button’s text. Default: "Pay €12.34" (with an amount) or "Pay", in the page’s locale.' }),
  locale: z
    .enum(PAGE_LOCALES, { error: `"locale" must be one of ${PAGE_LOCALES.join(', ')}.` })
    .optional()
    .meta({ description: 'The page’s language and the amount’s format. Default en.' }),
});

export const listFormSessionsSchema = z.strictObject({
  limit: z.coerce
    .number({ error: '"limit" must be an integer from 1 to 100.' })
    .int({ error: '"limit" must be an integer from 1 to 100.' })
    .min(1, { error: '"limit" must be an integer from 1 to 100.' })
    .max(100, { error: '"limit" must be an integer from 1 to 100.' })
    .default(10),
  startingAfter: z
    .string({ error: '"startingAfter" must be a form session id.' })
    .regex(FORM_SESSION_ID_PATTERN, { error: '"startingAfter" must be a form session id (fs_…).' })
    .optional(),
  status: z
    .enum(['open', 'completed', 'expired', 'canceled'], { error: '"status" must be open, completed, expired or canceled.' })
    .optional(),
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
  amount: number | null;
  currency: string | null;
  completionUrl: string | null;
  merchantName: string | null;
  logoUrl: string | null;
  submitLabel: string | null;
  locale: PageLocale;
  /** With a completionUrl, once a card was sent to it: the payment's state (app: FormSessionPayment). */
  payment: FormSessionPayment | null;
}

export interface FormSessionListJson {
  object: 'list';
  data: FormSessionJson[];
  /** More sessions after the last one: ask again with startingAfter = its id. */
  hasMore: boolean;
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
    amount: record.terms?.amount ?? null,
    currency: record.terms?.currency ?? null,
    completionUrl: record.terms?.completionUrl ?? null,
    ...(record.display ?? DEFAULT_DISPLAY),
    payment: record.payment ?? null,
  };
}

export function pageUrlOf(fieldsOrigin: string, id: string): string {
  return `${fieldsOrigin}/pay/${id}`;
}

function checkedUrl(raw: string, registered: readonly string[], mode: KeyMode, param: 'returnUrl' | 'cancelUrl' | 'completionUrl'): string {
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
  if ((input.amount === undefined) !== (input.currency === undefined)) {
    const missing = input.amount === undefined ? 'amount' : 'currency';
    throw new TesseraError('parameter_missing', {
      param: missing,
      message: `"${missing}" is required with "${missing === 'amount' ? 'currency' : 'amount'}".`,
    });
  }
  if (input.completionUrl !== undefined && input.amount === undefined) {
    throw new TesseraError('parameter_missing', { param: 'amount', message: '"amount" and "currency" are required with "completionUrl".' });
  }
  const completionUrl = input.completionUrl === undefined ? null : checkedUrl(input.completionUrl, registered, key.mode, 'completionUrl');
  const logoUrl = input.logoUrl === undefined ? null : checkedLogoUrl(input.logoUrl, key.mode);
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
    terms:
      input.amount === undefined || input.currency === undefined ? null : { amount: input.amount, currency: input.currency, completionUrl },
    display: {
      merchantName: input.merchantName ?? null,
      logoUrl,
      submitLabel: input.submitLabel ?? null,
      locale: input.locale ?? DEFAULT_DISPLAY.locale,
    },
    payment: null,
  };
  await deps.sessions.create(record);
  return record;
}

/**
 * A logo the page may load: an absolute https URL (http with test keys, for local shops), no
 * credentials, plain ASCII. The page's CSP then allows images from its origin only.
 */
function checkedLogoUrl(raw: string, mode: KeyMode): string {
  const refuse = (why: string): never => {
    throw new TesseraError('parameter_invalid', { param: 'logoUrl', message: `"logoUrl" ${why}.` });
  };
  if (/[^\x21-\x7e]/.test(raw) || !URL.canParse(raw)) refuse('must be an absolute URL of plain ASCII');
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(mode === 'test' && url.protocol === 'http:'))
    refuse(mode === 'live' ? 'must be https' : 'must be http(s)');
  if (url.username !== '' || url.password !== '') refuse('must not contain credentials');
  return url.href;
}

/** GET /v1/form-sessions: the key's merchant's sessions of the key's mode, newest first. */
export async function listFormSessions(
  deps: FormSessionDeps,
  key: Pick<ApiKeyRecord, 'merchantId' | 'mode'>,
  raw: Record<string, unknown>,
): Promise<{ sessions: FormSessionRecord[]; hasMore: boolean }> {
  const input = parseInput(listFormSessionsSchema, raw);
  const now = deps.now();
  const found: FormSessionRecord[] = [];
  let after = input.startingAfter;
  // A status filter reads past the sessions it skips, a bounded number of them.
  for (let scanned = 0; scanned < LIST_SCAN_LIMIT;) {
    const page = await deps.sessions.listPage(key.merchantId, key.mode, after, LIST_PAGE_SIZE);
    for (const record of page) {
      if (input.status !== undefined && formSessionStatus(record, now) !== input.status) continue;
      if (found.length === input.limit) return { sessions: found, hasMore: true };
      found.push(record);
    }
    if (page.length < LIST_PAGE_SIZE) break;
    scanned += page.length;
    after = page[page.length - 1]?.id;
  }
  return { sessions: found, hasMore: false };
}

const LIST_PAGE_SIZE = 101;
/** With a status filter, a list call reads at most this many sessions (then hasMore may be false early). */
const LIST_SCAN_LIMIT = 2000;

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
