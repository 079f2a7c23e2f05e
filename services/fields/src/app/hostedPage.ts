import { TesseraError, validateCard, type KeyMode, type ValidCard } from '@tessera/common';
import {
  csrfTokenMatches,
  FORM_SESSION_ID_PATTERN,
  formSessionStatus,
  formSigningSecret,
  signedReturnLocation,
  type FormSessionRecord,
  type FormSessionResult,
  type FormSessionStatus,
  type FormSessionStore,
} from '@tessera/merchant-data';
import type { FieldsVault } from './ports';
import { tokenizeBrowserCard, type AdmitCard } from './browserTokens';

/**
 * The hosted payment page's use cases: the shopper's browser loads, submits or cancels a form
 * session (/pay/{id}) that a merchant's server opened on the gateway (POST /v1/form-sessions).
 * Transport only parses and answers.
 */
export interface HostedPageDeps {
  sessions: FormSessionStore;
  vault: Pick<FieldsVault, 'tokenize'>;
  /** Keys the signature of the result the shopper carries back to the return URL (formSigningSecret). */
  pepper: string;
  /** FIELDS_ORIGIN: this page's own origin, the only one its forms may be posted from. */
  fieldsOrigin: string;
  now: () => Date;
}

/** Why the page cannot be used, as the catalogue code the shopper's page shows. */
function refusalOf(status: FormSessionStatus): TesseraError | undefined {
  if (status === 'expired') return new TesseraError('form_session_expired');
  if (status === 'completed' || status === 'canceled') return new TesseraError('form_session_used');
  return undefined;
}

/** GET /pay/{id}: the open session behind the page, or the 404/410 the shopper sees. */
export async function openFormSessionPage(deps: HostedPageDeps, id: string): Promise<FormSessionRecord> {
  const record = FORM_SESSION_ID_PATTERN.test(id) ? await deps.sessions.get(id) : undefined;
  if (record === undefined) throw new TesseraError('form_session_not_found');
  const refusal = refusalOf(formSessionStatus(record, deps.now()));
  if (refusal) throw refusal;
  return record;
}

/** The page's form fields (application/x-www-form-urlencoded). */
export interface CardFormInput {
  csrf?: unknown;
  cardnumber?: unknown;
  'exp-date'?: unknown;
  cvc?: unknown;
  ccname?: unknown;
}

/** `MM / YY`, `MM/YY`, `MM/YYYY` as the shopper typed it (the page formats it; without script it may not be). */
function parseExpiry(raw: string): { expiryMonth: number; expiryYear: number } {
  const digits = raw.replace(/\D/g, '');
  if (!/^\d{4}$|^\d{6}$/.test(digits)) {
    throw new TesseraError('parameter_invalid', { param: 'exp-date', message: 'Enter the expiry date as MM / YY.' });
  }
  const yearDigits = digits.slice(2);
  return { expiryMonth: Number(digits.slice(0, 2)), expiryYear: yearDigits.length === 2 ? 2000 + Number(yearDigits) : Number(yearDigits) };
}

const text = (value: unknown, max: number): string => (typeof value === 'string' ? value.slice(0, max) : '');

function checkCsrf(record: FormSessionRecord, presented: unknown): void {
  if (!csrfTokenMatches(presented, record.csrfToken)) throw new TesseraError('csrf_token_invalid');
}

export interface PageRedirect {
  location: string;
}

function signingSecretOf(deps: HostedPageDeps, record: FormSessionRecord): string {
  return formSigningSecret(deps.pepper, record.merchantId, record.mode);
}

function usedOrExpired(outcome: 'not_open' | 'expired' | 'missing'): TesseraError {
  if (outcome === 'expired') return new TesseraError('form_session_expired');
  if (outcome === 'missing') return new TesseraError('form_session_not_found');
  return new TesseraError('form_session_used');
}

/**
 * The card-testing checks of one hosted-page submission (docs/browser.md, "Card testing"). The
 * transport supplies them, bound to the shopper's address; each throws the refusal to answer.
 */
export interface SubmissionGuard {
  /**
   * Before the card is read: whether this session and this shopper may submit another card
   * (throws if not); a shorter life for its provisional token when the key is under attack.
   */
  beforeCard(record: FormSessionRecord): Promise<{ provisionalTtlSeconds?: number }>;
  /** A card the rules accepted, before it is tokenized: the browser route's check (app/tokens.ts). */
  admitCard: AdmitCard;
  /** A card the rules refused: counted against the session, which may now be closed to cards. */
  cardRefused(record: FormSessionRecord): Promise<void>;
}

function readCard(form: CardFormInput, mode: KeyMode, now: Date): ValidCard {
  const number = text(form.cardnumber, 64);
  if (number.trim() === '') throw new TesseraError('parameter_missing', { param: 'number', message: 'Enter the card number.' });
  const cvv = text(form.cvc, 8).trim();
  if (cvv === '') throw new TesseraError('parameter_missing', { param: 'cvv', message: 'Enter the security code.' });
  const holderName = text(form.ccname, 200).trim();
  return validateCard({ number, ...parseExpiry(text(form['exp-date'], 16)), cvv, ...(holderName !== '' ? { holderName } : {}) }, mode, now);
}

/**
 * POST /pay/{id}: the card (in the body only) is checked with the API's own rules, tokenized
 * (provisional, like every browser-made token: the merchant's server retains it), and the session
 * is completed, once; the shopper is then sent to the return URL with a signed result. A card the
 * rules refuse leaves the session open, so the shopper can correct it, a few times (`guard`).
 */
export async function submitCardForm(
  deps: HostedPageDeps,
  id: string,
  form: CardFormInput,
  ctx: { requestId: string; guard?: SubmissionGuard },
): Promise<PageRedirect> {
  const record = await openFormSessionPage(deps, id);
  checkCsrf(record, form.csrf);
  const admission = await ctx.guard?.beforeCard(record);
  let card: ValidCard;
  try {
    card = readCard(form, record.mode, deps.now());
  } catch (err) {
    // Only the card rules' refusals (400) are the shopper's guesses; our own failures are not.
    if (err instanceof TesseraError && err.status === 400) await ctx.guard?.cardRefused(record);
    throw err;
  }
  const guard = ctx.guard;
  const checks = {
    ...(guard ? { admitCard: (number: string) => guard.admitCard(number) } : {}),
    ...(admission?.provisionalTtlSeconds !== undefined ? { provisionalTtlSeconds: admission.provisionalTtlSeconds } : {}),
  };
  const token = await tokenizeBrowserCard(deps.vault, record, card, checks, { requestId: ctx.requestId });
  const result: FormSessionResult = {
    token: token.token,
    card: { brand: token.brand, last4: token.last4, expiryMonth: token.expiryMonth, expiryYear: token.expiryYear },
  };
  // A concurrent or replayed submission that lost the race leaves only a provisional token, which expires.
  const now = deps.now();
  const outcome = await deps.sessions.finish(record.id, 'completed', result, now);
  if (outcome !== 'finished') throw usedOrExpired(outcome);
  return { location: signedReturnLocation(signingSecretOf(deps, record), record.returnUrl, record.id, 'completed', now) };
}

/** POST /pay/{id}/cancel: the shopper gives up; the session is used and they go to the cancel URL. */
export async function cancelFormSession(deps: HostedPageDeps, id: string, form: { csrf?: unknown }): Promise<PageRedirect> {
  const record = await openFormSessionPage(deps, id);
  checkCsrf(record, form.csrf);
  if (record.cancelUrl === null) throw new TesseraError('route_not_found');
  const now = deps.now();
  const outcome = await deps.sessions.finish(record.id, 'canceled', null, now);
  if (outcome !== 'finished') throw usedOrExpired(outcome);
  return { location: signedReturnLocation(signingSecretOf(deps, record), record.cancelUrl, record.id, 'canceled', now) };
}
