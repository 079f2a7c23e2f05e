/**
 * The messages between tessera.js (on the merchant's page) and the card-fields iframe (on the
 * fields origin). Each side checks every message it receives against these shapes and drops
 * anything else, so a script on either page that posts look-alike messages gets nowhere.
 *
 * No message from the iframe to the page ever carries a card number, expiry digits typed so far,
 * or a CVC: only the events below and the tokenize result (token, brand, last 4, expiry), or for
 * the CVC-only field the token alone. Nothing else derived from the number (no BIN, no fingerprint):
 * the page may run a skimmer, and the API answers the iframe no more than this anyway.
 */
import { checkPresentation, type FieldsPresentation } from './appearance';
import { checkFieldsStyle, type FieldsStyle } from './style';

export const PROTOCOL_VERSION = 1;

export const FIELD_NAMES = ['number', 'expiry', 'cvc', 'name'] as const;
export type FieldName = (typeof FIELD_NAMES)[number];

/** Codes the fields report (change events, tokenize failures); messages are shown in the iframe. */
export const FIELD_ERROR_CODES = [
  'incomplete_number',
  'invalid_number',
  'incomplete_expiry',
  'invalid_expiry',
  'expired_card',
  'incomplete_cvc',
  'invalid_cvc',
  // A card of a brand the merchant's acceptedBrands leaves out: refused in the iframe, never sent.
  'brand_not_accepted',
] as const;
export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number];

/** What kind of problem a browser error is (shared/errors.ts TesseraError.type); tokenize failures carry it. */
export const TESSERA_ERROR_TYPES = ['validation_error', 'api_error', 'network_error', 'integration_error', 'rate_limit_error'] as const;
export type TesseraErrorType = (typeof TESSERA_ERROR_TYPES)[number];

export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay', 'maestro', 'unknown'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

/** Sent by the iframe to its parent window once loaded; carries nothing but the instance nonce. */
export interface HelloMessage {
  type: 'tessera:hello';
  v: typeof PROTOCOL_VERSION;
  nonce: string;
}

/**
 * Sent instead of a hello by the fields origin's refusal page (services/fields cardFieldsPage.ts),
 * which the server answers in place of the fields when the key or the page's origin cannot use
 * them: the page learns why at once, not from a broken frame. It carries no more than the code.
 */
export interface RefusedMessage {
  type: 'tessera:refused';
  v: typeof PROTOCOL_VERSION;
  nonce: string;
  code: RefusalCode;
}

/** Why the fields origin refused to show the fields: the key, the page's origin, or its own failure. */
export const REFUSAL_CODES = ['api_key_invalid', 'origin_not_allowed', 'fields_unavailable'] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** Sent by tessera.js to the iframe with the MessageChannel port every later message uses. */
export interface ConnectMessage {
  type: 'tessera:connect';
  v: typeof PROTOCOL_VERSION;
  nonce: string;
  style: FieldsStyle;
  /** Show the optional card holder name input. */
  holderName: boolean;
  /** The brands the merchant takes (absent: every brand the API takes); others are refused in the iframe. */
  acceptedBrands?: AcceptedBrand[];
  /**
   * The CVC-only field (tessera.cvcField): only the CVC input is shown, and `tokenize` attaches the
   * typed CVC to this session's token instead of making one. Absent for the card fields.
   */
  cvcSession?: CvcSessionGrant;
  /** Theme, texts, hidden labels and language (shared/appearance.ts); absent: the built-in look, in English. */
  presentation?: FieldsPresentation;
}

/**
 * A CVC session, as the merchant's server got it from POST /v1/token/{token}/cvc-sessions (its
 * secret key opens it): the grant to attach one CVC to this token, once, within minutes.
 */
export interface CvcSessionGrant {
  token: string;
  secret: string;
}

/** What the CVC-only field's submit() resolves with: the token, and nothing about the card. */
export interface CvcResult {
  token: string;
}

/** A brand the merchant may accept (acceptedBrands): any but `unknown`. */
export type AcceptedBrand = Exclude<CardBrand, 'unknown'>;

/** What the merchant may change on mounted fields without reloading them (FieldsCommand `update`). */
export type FieldsDisplayOptions = Omit<ConnectMessage, 'type' | 'v' | 'nonce' | 'cvcSession'>;

export interface ChangeEventPayload {
  empty: boolean;
  complete: boolean;
  valid: boolean;
  brand: CardBrand;
  /** The problem the shopper is shown, and the message as the fields show it. */
  error?: { code: FieldErrorCode; message: string };
}

export interface TokenizeResult {
  token: string;
  card: { brand: CardBrand; last4: string; expiryMonth: number; expiryYear: number };
}

export interface TokenizeError {
  code: string;
  message: string;
  /** The browser error type (shared/errors.ts), when the iframe knows better than the code's default. */
  type?: TesseraErrorType;
  /** Seconds to wait before trying again (a rate limit's Retry-After). */
  retryAfter?: number;
}

/** Iframe -> page, over the port. */
export type FieldsEvent =
  | { type: 'ready' }
  | { type: 'focus'; field: FieldName }
  | { type: 'blur'; field: FieldName }
  | ({ type: 'change' } & ChangeEventPayload)
  | { type: 'tokenized'; id: number; result: TokenizeResult }
  | { type: 'cvc_attached'; id: number; result: CvcResult }
  | { type: 'tokenize_failed'; id: number; error: TokenizeError }
  /** Enter in a field: the page decides whether to tokenize. */
  | { type: 'submit' }
  /** The form's height in CSS pixels, so tessera.js sizes the iframe; not passed to the page's handlers. */
  | { type: 'resize'; height: number };

/** Page -> iframe, over the port. */
export type FieldsCommand =
  | { type: 'tokenize'; id: number }
  | { type: 'focus' }
  | { type: 'clear' }
  /** New display options (card.update()), applied in place: the iframe is not reloaded and keeps what was typed. */
  | { type: 'update'; options: FieldsDisplayOptions };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const oneOf = <T extends string>(list: readonly T[], v: unknown): v is T =>
  typeof v === 'string' && (list as readonly string[]).includes(v);
const hasOnly = (value: Record<string, unknown>, keys: readonly string[]): boolean => Object.keys(value).every((k) => keys.includes(k));
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;
const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isShortString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;

export function isTesseraErrorType(value: unknown): value is TesseraErrorType {
  return oneOf(TESSERA_ERROR_TYPES, value);
}

export function isNonce(value: unknown): value is string {
  return typeof value === 'string' && NONCE.test(value);
}

export function parseHello(data: unknown): HelloMessage | undefined {
  if (!isRecord(data) || !hasOnly(data, ['type', 'v', 'nonce'])) return undefined;
  if (data.type !== 'tessera:hello' || data.v !== PROTOCOL_VERSION || !isNonce(data.nonce)) return undefined;
  return { type: data.type, v: PROTOCOL_VERSION, nonce: data.nonce };
}

export function parseRefused(data: unknown): RefusedMessage | undefined {
  if (!isRecord(data) || !hasOnly(data, ['type', 'v', 'nonce', 'code'])) return undefined;
  if (data.type !== 'tessera:refused' || data.v !== PROTOCOL_VERSION || !isNonce(data.nonce) || !oneOf(REFUSAL_CODES, data.code)) {
    return undefined;
  }
  return { type: data.type, v: PROTOCOL_VERSION, nonce: data.nonce, code: data.code };
}

/** A non-empty list of distinct brands the API knows (not `unknown`), or undefined. */
export function parseAcceptedBrands(value: unknown): AcceptedBrand[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > CARD_BRANDS.length) return undefined;
  if (!value.every((b) => oneOf(CARD_BRANDS, b) && b !== 'unknown') || new Set(value).size !== value.length) return undefined;
  return value as AcceptedBrand[];
}

export function parseConnect(data: unknown): ConnectMessage | undefined {
  const keys = ['type', 'v', 'nonce', 'style', 'holderName', 'acceptedBrands', 'cvcSession', 'presentation'];
  if (!isRecord(data) || !hasOnly(data, keys)) return undefined;
  if (data.type !== 'tessera:connect' || data.v !== PROTOCOL_VERSION || !isNonce(data.nonce) || !isBool(data.holderName)) return undefined;
  const cvcSession = data.cvcSession === undefined ? undefined : parseCvcSessionGrant(data.cvcSession);
  if (data.cvcSession !== undefined && cvcSession === undefined) return undefined;
  const acceptedBrands = data.acceptedBrands === undefined ? undefined : parseAcceptedBrands(data.acceptedBrands);
  if (data.acceptedBrands !== undefined && acceptedBrands === undefined) return undefined;
  const style = checkFieldsStyle(data.style);
  if (!style.ok) return undefined;
  // Checked again here, contrast included: the page may not be running tessera.js's own check.
  const presentation = data.presentation === undefined ? undefined : checkPresentation(data.presentation);
  if (presentation !== undefined && !presentation.ok) return undefined;
  const connect: ConnectMessage = {
    type: data.type,
    v: PROTOCOL_VERSION,
    nonce: data.nonce,
    style: style.style,
    holderName: data.holderName,
    ...(acceptedBrands === undefined ? {} : { acceptedBrands }),
    ...(presentation === undefined ? {} : { presentation: presentation.presentation }),
  };
  return cvcSession === undefined ? connect : { ...connect, cvcSession };
}

/** An update's options are checked exactly as a connect's are (the same fields, the same rules). */
const UPDATE_NONCE = 'update-options-nonce';

export function parseDisplayOptions(value: unknown): FieldsDisplayOptions | undefined {
  if (!isRecord(value) || 'cvcSession' in value || 'type' in value || 'v' in value || 'nonce' in value) return undefined;
  const connect = parseConnect({ ...value, type: 'tessera:connect', v: PROTOCOL_VERSION, nonce: UPDATE_NONCE });
  if (connect === undefined) return undefined;
  const { type: _type, v: _v, nonce: _nonce, cvcSession: _cvc, ...options } = connect;
  return options;
}

const CVC_SESSION_SECRET = /^cvcs_[A-Za-z0-9_-]{43}$/;

/** The `{ token, secret }` of a CVC session (extra fields of the API's answer, such as expiresAt, are dropped). */
export function parseCvcSessionGrant(value: unknown): CvcSessionGrant | undefined {
  if (!isRecord(value) || !isToken(value.token) || typeof value.secret !== 'string' || !CVC_SESSION_SECRET.test(value.secret)) {
    return undefined;
  }
  return { token: value.token, secret: value.secret };
}

export function parseCommand(data: unknown): FieldsCommand | undefined {
  if (!isRecord(data)) return undefined;
  if (data.type === 'tokenize' && hasOnly(data, ['type', 'id']) && isId(data.id)) return { type: 'tokenize', id: data.id };
  if ((data.type === 'focus' || data.type === 'clear') && hasOnly(data, ['type'])) return { type: data.type };
  if (data.type === 'update' && hasOnly(data, ['type', 'options'])) {
    const options = parseDisplayOptions(data.options);
    return options === undefined ? undefined : { type: 'update', options };
  }
  return undefined;
}

const LAST4 = /^\d{4}$/;
const TOKEN = /^tok\.[A-Za-z0-9_-]{16,200}$/;

export function isToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN.test(value);
}

function parseTokenizeResult(v: unknown): TokenizeResult | undefined {
  if (!isRecord(v) || !hasOnly(v, ['token', 'card']) || typeof v.token !== 'string' || !TOKEN.test(v.token)) return undefined;
  const card = v.card;
  if (!isRecord(card) || !hasOnly(card, ['brand', 'last4', 'expiryMonth', 'expiryYear'])) return undefined;
  if (!oneOf(CARD_BRANDS, card.brand) || typeof card.last4 !== 'string' || !LAST4.test(card.last4)) return undefined;
  if (!isId(card.expiryMonth) || card.expiryMonth > 12 || !isId(card.expiryYear)) return undefined;
  return { token: v.token, card: { brand: card.brand, last4: card.last4, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear } };
}

/** What tessera.js accepts from the iframe; anything else (or any extra field) is dropped. */
export function parseEvent(data: unknown): FieldsEvent | undefined {
  if (!isRecord(data)) return undefined;
  switch (data.type) {
    case 'ready':
    case 'submit':
      return hasOnly(data, ['type']) ? { type: data.type } : undefined;
    case 'focus':
    case 'blur':
      return hasOnly(data, ['type', 'field']) && oneOf(FIELD_NAMES, data.field) ? { type: data.type, field: data.field } : undefined;
    case 'change': {
      if (!hasOnly(data, ['type', 'empty', 'complete', 'valid', 'brand', 'error'])) return undefined;
      if (!isBool(data.empty) || !isBool(data.complete) || !isBool(data.valid) || !oneOf(CARD_BRANDS, data.brand)) return undefined;
      const event: FieldsEvent = { type: 'change', empty: data.empty, complete: data.complete, valid: data.valid, brand: data.brand };
      if (data.error === undefined) return event;
      const error = data.error;
      if (!isRecord(error) || !hasOnly(error, ['code', 'message']) || !oneOf(FIELD_ERROR_CODES, error.code)) return undefined;
      // The message is the fields' own sentence for the code (it may be translated): short, and no digits.
      if (!isShortString(error.message, 200) || /\d/.test(error.message)) return undefined;
      return { ...event, error: { code: error.code, message: error.message } };
    }
    case 'tokenized': {
      if (!hasOnly(data, ['type', 'id', 'result']) || !isId(data.id)) return undefined;
      const result = parseTokenizeResult(data.result);
      return result ? { type: 'tokenized', id: data.id, result } : undefined;
    }
    case 'cvc_attached': {
      if (!hasOnly(data, ['type', 'id', 'result']) || !isId(data.id)) return undefined;
      const result = data.result;
      if (!isRecord(result) || !hasOnly(result, ['token']) || !isToken(result.token)) return undefined;
      return { type: 'cvc_attached', id: data.id, result: { token: result.token } };
    }
    case 'tokenize_failed': {
      if (!hasOnly(data, ['type', 'id', 'error']) || !isId(data.id) || !isRecord(data.error)) return undefined;
      if (!hasOnly(data.error, ['code', 'message', 'type', 'retryAfter'])) return undefined;
      const { code, message, type, retryAfter } = data.error;
      if (!isShortString(code, 64) || !/^[a-z_]+$/.test(code) || !isShortString(message, 300)) return undefined;
      if (type !== undefined && !isTesseraErrorType(type)) return undefined;
      if (retryAfter !== undefined && !(isId(retryAfter) && retryAfter <= 86_400)) return undefined;
      return {
        type: 'tokenize_failed',
        id: data.id,
        error: { code, message, ...(type === undefined ? {} : { type }), ...(retryAfter === undefined ? {} : { retryAfter }) },
      };
    }
    case 'resize':
      return hasOnly(data, ['type', 'height']) && isId(data.height) && data.height <= 2000
        ? { type: 'resize', height: data.height }
        : undefined;
    default:
      return undefined;
  }
}

/**
 * Origins as the browser reports them in `event.origin` / `Origin`: scheme, host, optional port,
 * nothing else. Anything else (a path, `null`, credentials) is not an origin.
 */
export function isOrigin(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= 300 &&
    /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/i.test(value)
  );
}
