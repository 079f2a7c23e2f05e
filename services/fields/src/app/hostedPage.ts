import { TesseraError, validateCard, type KeyMode, type Logger, type ValidCard } from '@tessera/common';
import {
  csrfTokenMatches,
  DEFAULT_DISPLAY,
  FORM_SESSION_ID_PATTERN,
  formSessionStatus,
  formSigningSecret,
  MAX_PAYMENT_ATTEMPTS,
  readCompletionAnswer,
  signedCompletionCall,
  signedReturnLocation,
  type CompletionAnswer,
  type FormSessionPaymentTerms,
  type FormSessionRecord,
  type FormSessionResult,
  type FormSessionStatus,
  type FormSessionStore,
  type PageLocale,
} from '@tessera/merchant-data';
import type { FieldsVault, MerchantCompletions } from './ports';
import { tokenizeBrowserCard, type AdmitCard } from './browserTokens';
import { recordFormSessionCompleted, type FieldsEventDeps } from './formSessionEvents';

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
  /** The proxy's CallCompletion (PROXY_ADDR); absent: sessions with a completion URL take no card. */
  completions?: MerchantCompletions;
  /** COMPLETION_TIMEOUT_MS. */
  completionTimeoutMs?: number;
  /** Says when a payment's outcome is unknown (the merchant must settle it); absent: not logged. */
  logger?: Logger;
  /** Where form_session.completed is recorded; absent: no events (unit tests of other rules). */
  events?: FieldsEventDeps;
}

/** Why the page cannot be used, as the catalogue code the shopper's page shows. */
function refusalOf(status: FormSessionStatus): TesseraError | undefined {
  if (status === 'expired') return new TesseraError('form_session_expired');
  if (status === 'completed' || status === 'canceled') return new TesseraError('form_session_used');
  return undefined;
}

/** A session whose merchant charges through a completion URL cannot take a card without the proxy: its page says so. */
export function assertPayable(deps: Pick<HostedPageDeps, 'completions'>, record: FormSessionRecord): void {
  if ((record.terms?.completionUrl ?? null) !== null && deps.completions === undefined) throw new TesseraError('payments_unavailable');
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

/** The merchant declined the card: the page is shown again with its message, for another card. */
export interface PageDeclined {
  declined: string;
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
 * With a completion URL the merchant charges the token before the redirect (completePayment).
 */
export async function submitCardForm(
  deps: HostedPageDeps,
  id: string,
  form: CardFormInput,
  ctx: { requestId: string; guard?: SubmissionGuard },
): Promise<PageRedirect | PageDeclined> {
  const record = await openFormSessionPage(deps, id);
  checkCsrf(record, form.csrf);
  const completionUrl = record.terms?.completionUrl ?? null;
  // Before any card is read: a card the merchant can never be asked to charge is not taken.
  assertPayable(deps, record);
  if (record.payment?.status === 'processing') throw new TesseraError('form_session_processing');
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
  if (record.terms && completionUrl !== null && deps.completions) {
    return completePayment(deps, { record, terms: record.terms, completionUrl, completions: deps.completions }, result, ctx);
  }
  // A concurrent or replayed submission that lost the race leaves only a provisional token, which expires.
  const now = deps.now();
  const outcome = await deps.sessions.finish(record.id, 'completed', result, now);
  if (outcome !== 'finished') throw usedOrExpired(outcome);
  // Recorded here, before the redirect is even sent: the merchant learns of it if the shopper never comes back.
  await recordFormSessionCompleted(deps.events, { ...record, status: 'completed', finishedAt: now.toISOString(), result });
  return { location: signedReturnLocation(signingSecretOf(deps, record), record.returnUrl, record.id, 'completed', now) };
}

/**
 * The charge before the redirect: the card's token goes to the merchant's completion endpoint
 * (through the proxy, signed with the merchant's form signing secret), one attempt at a time, and
 * the merchant's answer decides. `succeeded`: the session completes and the shopper is sent back.
 * `declined`: the session stays open and the page shows the message, for another card (counted
 * by the card-testing guard like a refused card, and capped at MAX_PAYMENT_ATTEMPTS). Anything
 * else, a timeout included: the merchant may have charged, so the session completes with
 * `payment: unknown` and takes no further card; never a second charge for one checkout.
 */
async function completePayment(
  deps: HostedPageDeps,
  session: { record: FormSessionRecord; terms: FormSessionPaymentTerms; completionUrl: string; completions: MerchantCompletions },
  result: FormSessionResult,
  ctx: { requestId: string; guard?: SubmissionGuard },
): Promise<PageRedirect | PageDeclined> {
  const { record, terms } = session;
  const begun = await deps.sessions.beginAttempt(record.id, MAX_PAYMENT_ATTEMPTS, deps.now());
  if (!begun.began) {
    if (begun.reason === 'processing') throw new TesseraError('form_session_processing');
    if (begun.reason === 'attempts_used') {
      throw new TesseraError('form_session_used', {
        message: 'This payment page takes no more cards. Go back to the shop and start again.',
      });
    }
    throw usedOrExpired(begun.reason);
  }
  const attempt = begun.attempt;
  const secret = signingSecretOf(deps, record);
  const call = signedCompletionCall(
    secret,
    { formSession: record.id, attempt, token: result.token, card: result.card, amount: terms.amount, currency: terms.currency },
    deps.now(),
  );
  let answer: CompletionAnswer;
  try {
    const reply = await session.completions.callCompletion(
      {
        merchantId: record.merchantId,
        mode: record.mode,
        url: session.completionUrl,
        headers: [{ name: 'Tessera-Signature', value: call.signature }],
        body: Buffer.from(call.body),
        timeoutMs: deps.completionTimeoutMs ?? DEFAULT_COMPLETION_TIMEOUT_MS,
      },
      { requestId: ctx.requestId },
    );
    answer = readCompletionAnswer(reply.status, reply.body.toString('utf8'));
  } catch (err) {
    answer = { outcome: 'unknown', reason: err instanceof TesseraError ? err.code : 'call failed' };
  }
  if (answer.outcome === 'declined') {
    await deps.sessions.settleDeclined(record.id, attempt, answer.message);
    // A decline counts like a refused card: a card tester cycling numbers through the merchant's
    // charge meets the same limit, and the guard may close the session now (it throws then).
    await ctx.guard?.cardRefused(record);
    return { declined: answer.message };
  }
  const now = deps.now();
  const payment = { status: answer.outcome, attempts: attempt, declineMessage: null };
  if (answer.outcome === 'unknown') {
    deps.logger?.warn(
      { requestId: ctx.requestId, merchantId: record.merchantId, attempt, reason: answer.reason },
      'completion outcome unknown: the form session takes no further card; the merchant settles it',
    );
  }
  const outcome = await deps.sessions.finish(record.id, 'completed', result, now, { attempt, payment });
  if (outcome !== 'finished') throw usedOrExpired(outcome);
  await recordFormSessionCompleted(deps.events, { ...record, status: 'completed', finishedAt: now.toISOString(), result, payment });
  return { location: signedReturnLocation(secret, record.returnUrl, record.id, 'completed', now, answer.outcome) };
}

const DEFAULT_COMPLETION_TIMEOUT_MS = 10_000;

/**
 * Where the "expired" and "already used" pages send the shopper: the session's cancel URL, else
 * its return URL, plainly (no signature: nothing happened there), with the shop's name when known.
 * Undefined for an unknown session.
 */
export async function shopLinkOf(
  deps: HostedPageDeps,
  id: string,
): Promise<{ url: string; merchantName: string | null; locale: PageLocale } | undefined> {
  const record = FORM_SESSION_ID_PATTERN.test(id) ? await deps.sessions.get(id) : undefined;
  if (record === undefined) return undefined;
  const display = record.display ?? DEFAULT_DISPLAY;
  return { url: record.cancelUrl ?? record.returnUrl, merchantName: display.merchantName, locale: display.locale };
}

/** POST /pay/{id}/cancel: the shopper gives up; the session is used and they go to the cancel URL. */
export async function cancelFormSession(deps: HostedPageDeps, id: string, form: { csrf?: unknown }): Promise<PageRedirect> {
  const record = await openFormSessionPage(deps, id);
  checkCsrf(record, form.csrf);
  if (record.cancelUrl === null) throw new TesseraError('route_not_found');
  // The merchant may be charging the card right now: the shopper learns the result instead.
  if (record.payment?.status === 'processing') throw new TesseraError('form_session_processing');
  const now = deps.now();
  const outcome = await deps.sessions.finish(record.id, 'canceled', null, now);
  if (outcome !== 'finished') throw usedOrExpired(outcome);
  return { location: signedReturnLocation(signingSecretOf(deps, record), record.cancelUrl, record.id, 'canceled', now) };
}
