/**
 * The card fields: runs inside the iframe served from the fields origin, the only place card data
 * is typed. The merchant's page cannot read this document (another origin); it talks to it through
 * a MessageChannel set up by a checked handshake, and gets events and the token, never the digits.
 */
import {
  isNonce,
  isOrigin,
  parseCommand,
  parseConnect,
  PROTOCOL_VERSION,
  type CvcSessionGrant,
  type FieldsDisplayOptions,
  type FieldsEvent,
  type HelloMessage,
  type TokenizeError,
} from '../shared/protocol';
import { errorTypeOf } from '../shared/errors';
import type { FieldsStyle } from '../shared/style';
import { LOCALE_TEXTS, type FieldsText } from '../shared/locale';
import type { FieldsPresentation } from '../shared/appearance';
import { parseChallenge, solveChallenge } from '../shared/proofOfWork';
import { digitsOf, type CardField } from './cardState';
import { byId, wireCardInputs, type InputStates } from './cardInputs';
import { applyPresentation, styleFieldInput, type AppliedPresentation } from './applyAppearance';

/** Where the card's proof-of-work solution goes (CHALLENGE_SOLUTION_HEADER of @tessera/edge, read by the fields service). */
const CHALLENGE_HEADER = 'x-tessera-challenge';

function hashParams(): URLSearchParams {
  return new URLSearchParams(location.hash.slice(1));
}

/**
 * The parent page's origin. Where the browser tells us (`location.ancestorOrigins`, Chromium and
 * Safari) that is the answer, and what tessera.js claimed in the fragment must agree; elsewhere
 * the claim is used, and the handshake then only succeeds if the parent really has that origin
 * (event.origin is set by the browser). frame-ancestors has already limited who the parent can be.
 */
function parentOriginOf(): string | undefined {
  const claimed = hashParams().get('origin') ?? undefined;
  const ancestors = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins;
  const reported = ancestors && ancestors.length > 0 ? ancestors[0] : undefined;
  if (reported !== undefined && claimed !== undefined && reported !== claimed) return undefined;
  const origin = reported ?? claimed;
  return isOrigin(origin) ? origin : undefined;
}

/** An API answer as the fields read it: the status, the JSON body, if any, and its Retry-After in seconds. */
interface ApiAnswer {
  status: number;
  body: Record<string, unknown> | undefined;
  retryAfter?: number;
}

/** Retry-After as whole seconds (RFC 9110 allows a date too; the API sends seconds). */
function retryAfterOf(header: string | null): number | undefined {
  if (header === null || !/^\d{1,6}$/.test(header.trim())) return undefined;
  return Math.max(1, Number(header.trim()));
}

/**
 * The API's refusals of the card that the shopper can act on, in the fields' words (in the fields'
 * language, shared/locale.ts) and at the field they concern (shown in the live region as well as
 * rejecting tokenize()). A code not listed here is shown with the API's own message at the number
 * when its type says it is about the card.
 */
function refusalsShown(text: FieldsText): Record<string, { field: CardField; message: string }> {
  return {
    card_number_invalid: { field: 'number', message: text.errors.invalid_number },
    card_expired: { field: 'expiry', message: text.errors.expired_card },
    cvv_invalid: { field: 'cvc', message: text.errors.invalid_cvc },
    live_card_in_test_mode: { field: 'number', message: text.refusals.live_card_in_test_mode },
    test_card_in_live_mode: { field: 'number', message: text.refusals.test_card_in_live_mode },
    rate_limited: { field: 'number', message: text.refusals.rate_limited },
    network_error: { field: 'number', message: text.networkError },
  };
}

function start(): void {
  const form = byId<HTMLFormElement>('card-form');
  const key = new URLSearchParams(location.search).get('key') ?? '';
  const nonce = hashParams().get('nonce');
  const parentOrigin = parentOriginOf();
  // Opened on its own, or with a parent we cannot name: there is nobody to hand a token to.
  if (window.parent === window || parentOrigin === undefined || !isNonce(nonce)) {
    form.hidden = true;
    byId('standalone').hidden = false;
    return;
  }

  let style: FieldsStyle = {};
  /** The merchant's look and language (fields/applyAppearance.ts); English and the built-in look until connected. */
  let presentation: AppliedPresentation | undefined;
  const text = (): typeof LOCALE_TEXTS.en => presentation?.text ?? LOCALE_TEXTS.en;
  let port: MessagePort | undefined;
  let lastChange = '';
  let tokenizing = false;
  /** Set by the CVC-only field's connect: the grant (and its token) the CVC is attached under. */
  let cvcSession: CvcSessionGrant | undefined;
  const send = (event: FieldsEvent): void => port?.postMessage(event);

  function applyStyle(input: HTMLInputElement, states: InputStates): void {
    styleFieldInput(input, states, style, presentation);
  }

  const card = wireCardInputs({
    onFocus: (field) => send({ type: 'focus', field }),
    onBlur: (field) => send({ type: 'blur', field }),
    onChecked: (payload) => {
      const serialized = JSON.stringify(payload);
      if (serialized !== lastChange) {
        lastChange = serialized;
        send({ type: 'change', ...payload });
      }
    },
    styleInput: applyStyle,
  });
  const { inputs, values } = card;

  /** Theme, texts and language: the handshake's, and any later ones (the whole options each time; applying twice changes nothing). */
  function present(next: FieldsPresentation): void {
    presentation = applyPresentation(document, next, navigator.languages ?? [navigator.language]);
    card.setText(presentation.text);
  }
  const update = (): void => void card.update();
  // form-action 'none' blocks a submission anyway; Enter in a field must not try one. Enter is the
  // shopper saying "pay": the page hears `submit` and decides (a form of several inputs without a
  // button has no implicit submission, so the key itself is watched).
  form.addEventListener('submit', (event) => event.preventDefault());
  form.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || event.isComposing || !(event.target instanceof HTMLInputElement)) return;
    event.preventDefault();
    send({ type: 'submit' });
  });

  /**
   * A call to a browser route of this same origin (the fields service) with the publishable key (a
   * GET without `body`): status and JSON body. Same-origin only: the card never leaves this origin.
   */
  async function callApi(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const response = await fetch(path, {
      method: body === undefined ? 'GET' : 'POST',
      mode: 'same-origin',
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        'x-api-key': key,
        // The server checks it against the key's allowed origins (see docs/browser.md).
        'x-tessera-parent-origin': parentOrigin as string,
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const retryAfter = retryAfterOf(response.headers.get('retry-after'));
    return {
      status: response.status,
      body: (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined,
      ...(retryAfter === undefined ? {} : { retryAfter }),
    };
  }

  /**
   * Sends a card; when the key is under card-testing pressure (`challenge_required`), fetches a
   * challenge, solves it here in the iframe and sends the card once more with the solution.
   */
  async function sendWithProofOfWork(path: string, body: unknown): Promise<ApiAnswer> {
    const first = await callApi(path, body);
    const code = (first.body?.error as { code?: unknown } | undefined)?.code;
    if (first.status !== 429 || code !== 'challenge_required') return first;
    const issued = await callApi('/v1/browser/challenge');
    const challenge = issued.status === 200 ? parseChallenge(issued.body) : undefined;
    const solution = challenge === undefined ? undefined : await solveChallenge(challenge);
    return solution === undefined ? first : callApi(path, body, { [CHALLENGE_HEADER]: solution });
  }

  /**
   * Sends the card (or, for the CVC-only field, the CVC under `cvcSession`) and tells the page the
   * token and the card's brand, last 4 and expiry (the CVC-only field: the token alone), or the
   * API's error; never a digit typed. The page gets only the fields named here, whatever the API
   * answered.
   */
  async function tokenize(id: number): Promise<void> {
    const fail = (error: TokenizeError): void => send({ type: 'tokenize_failed', id, error });
    /**
     * The API's refusal as the page sees it: its code, message, kind and wait only; shown in the
     * fields too when the shopper can do something about it.
     */
    const failWith = (answer: ApiAnswer): void => {
      const error = (answer.body?.error ?? {}) as { code?: unknown; message?: unknown; type?: unknown; retryAfter?: unknown };
      const code = typeof error.code === 'string' && /^[a-z_]{1,64}$/.test(error.code) ? error.code : 'api_error';
      const message =
        typeof error.message === 'string' ? error.message.slice(0, 300) : `The card could not be tokenized (HTTP ${answer.status}).`;
      const type = errorTypeOf(code, error.type);
      const shown = refusalsShown(text())[code] ?? (type === 'validation_error' ? { field: 'number' as const, message } : undefined);
      if (shown !== undefined) card.showRefusal(cvcSession === undefined ? shown.field : 'cvc', shown.message);
      // The wait: Retry-After, else one the envelope may carry.
      const retryAfter = answer.retryAfter ?? (typeof error.retryAfter === 'number' ? retryAfterOf(String(error.retryAfter)) : undefined);
      fail({ code, message, type, ...(retryAfter === undefined ? {} : { retryAfter }) });
    };
    if (tokenizing) return fail({ code: 'tokenize_in_progress', message: text().tokenizeInProgress });
    const current = values();
    const firstError = card.showAll();
    const { checks } = card.update();
    if (firstError !== undefined) return fail({ code: firstError, message: text().errors[firstError] });
    const expiry = checks.expiry;
    if (cvcSession === undefined && expiry.value === undefined)
      return fail({ code: 'invalid_expiry', message: text().errors.invalid_expiry });
    const name = current.name.trim();
    tokenizing = true;
    try {
      if (cvcSession !== undefined) {
        const answer = await sendWithProofOfWork(`/v1/browser/tokens/${encodeURIComponent(cvcSession.token)}/cvc`, {
          cvv: digitsOf(current.cvc),
          cvcSession: cvcSession.secret,
        });
        if (answer.status === 200) return send({ type: 'cvc_attached', id, result: { token: cvcSession.token } });
        return failWith(answer);
      }
      const answer = await sendWithProofOfWork('/v1/browser/tokens', {
        number: digitsOf(current.number),
        expiryMonth: expiry.value?.month,
        expiryYear: expiry.value?.year,
        cvv: digitsOf(current.cvc),
        ...(name === '' ? {} : { holderName: name }),
      });
      const body = answer.body;
      if (answer.status === 201 && body !== undefined) {
        const summary = {
          brand: checks.brand,
          last4: String(body.last4),
          expiryMonth: Number(body.expiryMonth),
          expiryYear: Number(body.expiryYear),
        };
        return send({ type: 'tokenized', id, result: { token: String(body.token), card: summary } });
      }
      failWith(answer);
    } catch {
      const refusal = refusalsShown(text()).network_error as { field: CardField; message: string };
      card.showRefusal(cvcSession === undefined ? refusal.field : 'cvc', refusal.message);
      fail({ code: 'network_error', message: refusal.message, type: 'network_error' });
    } finally {
      tokenizing = false;
    }
  }

  function onCommand(event: MessageEvent): void {
    const command = parseCommand(event.data);
    if (command === undefined) return;
    if (command.type === 'tokenize') void tokenize(command.id);
    else if (command.type === 'focus') (cvcSession === undefined ? inputs.number : inputs.cvc).focus();
    else if (command.type === 'update') applyOptions(command.options);
    else card.clear();
  }

  /** The merchant's options, at connect and on every update(): applied in place, keeping what was typed. */
  function applyOptions(options: FieldsDisplayOptions): void {
    style = options.style;
    present(options.presentation ?? {});
    byId('name-row').hidden = !options.holderName || cvcSession !== undefined;
    card.acceptBrands(options.acceptedBrands);
  }

  function onConnect(event: MessageEvent): void {
    // Only the window that framed us, speaking from the origin we named, with our nonce.
    if (event.source !== window.parent || event.origin !== parentOrigin) return;
    const connect = parseConnect(event.data);
    const channel = event.ports[0];
    if (connect === undefined || connect.nonce !== nonce || channel === undefined || event.ports.length !== 1) return;
    window.removeEventListener('message', onConnect);
    cvcSession = connect.cvcSession;
    applyOptions(connect);
    if (cvcSession !== undefined) card.only(['cvc']);
    port = channel;
    port.onmessage = onCommand;
    send({ type: 'ready' });
    update();
    const resized = (): void => send({ type: 'resize', height: Math.max(1, Math.ceil(form.getBoundingClientRect().height)) });
    if (typeof ResizeObserver === 'function') new ResizeObserver(resized).observe(form);
    resized();
  }

  window.addEventListener('message', onConnect);
  const hello: HelloMessage = { type: 'tessera:hello', v: PROTOCOL_VERSION, nonce };
  window.parent.postMessage(hello, parentOrigin);
  update();
}

start();
