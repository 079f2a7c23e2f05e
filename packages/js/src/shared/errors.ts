/**
 * The one error class of the browser SDK: every rejection of tessera.js and every `error` event
 * carries a `code` (stable, for programs), a `type` (what kind of problem, so a page can decide
 * whether to show it to the shopper, retry or fix its integration), a `message` (for humans, never
 * any card data) and, for a rate limit, `retryAfter` in seconds.
 *
 * Shared by tessera.js (which throws it), the iframe (which picks the type of the API's refusals)
 * and `@tessera/js` (which exports its types).
 */
import { FIELD_ERROR_CODES, type FieldErrorCode, type TesseraErrorType } from './protocol';

export { isTesseraErrorType, TESSERA_ERROR_TYPES, type TesseraErrorType } from './protocol';

/** The page's own mistakes: a wrong key, a missing container, a call after destroy(), a refused origin. */
export const INTEGRATION_ERROR_CODES = [
  'invalid_publishable_key',
  'secret_key_in_browser',
  'fields_origin_unknown',
  'container_not_found',
  'container_has_fields',
  'already_mounted',
  'invalid_style',
  // An appearance that fails its check or WCAG AA contrast, bad labels or placeholders; a locale we do not have.
  'invalid_appearance',
  'invalid_locale',
  'invalid_accepted_brands',
  'cvc_session_required',
  'fields_not_ready',
  'tokenize_in_progress',
  'destroyed',
  // The fields refused this page or could not load in it (the refusal page or the load watchdog).
  'api_key_invalid',
  'origin_not_allowed',
  'fields_load_failed',
  // The API's answers a page can only fix in its code or on its server.
  'publishable_key_forbidden',
  'cvc_session_not_found',
  'cvc_session_expired',
  'cvc_session_used',
  'token_not_found',
  'csrf_token_invalid',
] as const;

/** The card the shopper typed: shown in the fields, fixed by the shopper. */
export const CARD_REFUSAL_CODES = [
  'card_number_invalid',
  'card_expired',
  'cvv_invalid',
  'test_card_in_live_mode',
  'live_card_in_test_mode',
  'parameter_invalid',
  'parameter_missing',
  'parameter_unknown',
] as const;

export const RATE_LIMIT_ERROR_CODES = ['rate_limited', 'challenge_required'] as const;
export const NETWORK_ERROR_CODES = ['network_error', 'timeout'] as const;
export const API_ERROR_CODES = ['fields_unavailable', 'api_error', 'internal_error', 'service_unavailable', 'upstream_timeout'] as const;

/** Every code a TesseraError of tessera.js can carry. */
export type TesseraErrorCode =
  | FieldErrorCode
  | (typeof INTEGRATION_ERROR_CODES)[number]
  | (typeof CARD_REFUSAL_CODES)[number]
  | (typeof RATE_LIMIT_ERROR_CODES)[number]
  | (typeof NETWORK_ERROR_CODES)[number]
  | (typeof API_ERROR_CODES)[number];

const TYPE_OF = new Map<string, TesseraErrorType>([
  ...FIELD_ERROR_CODES.map((code) => [code, 'validation_error'] as const),
  ...CARD_REFUSAL_CODES.map((code) => [code, 'validation_error'] as const),
  ...INTEGRATION_ERROR_CODES.map((code) => [code, 'integration_error'] as const),
  ...RATE_LIMIT_ERROR_CODES.map((code) => [code, 'rate_limit_error'] as const),
  ...NETWORK_ERROR_CODES.map((code) => [code, 'network_error'] as const),
  ...API_ERROR_CODES.map((code) => [code, 'api_error'] as const),
]);

/** The API envelope's `type` (docs/errors.md) as a browser error's, for a code this SDK does not list yet. */
const TYPE_OF_API_TYPE: Record<string, TesseraErrorType> = {
  invalid_request_error: 'validation_error',
  card_data_error: 'validation_error',
  authentication_error: 'integration_error',
  permission_error: 'integration_error',
  not_found_error: 'integration_error',
  rate_limit_error: 'rate_limit_error',
};

/** The type of a code: from the lists above, else from the API envelope's type, else an API error. */
export function errorTypeOf(code: string, apiType?: unknown): TesseraErrorType {
  return TYPE_OF.get(code) ?? (typeof apiType === 'string' ? TYPE_OF_API_TYPE[apiType] : undefined) ?? 'api_error';
}

export interface TesseraErrorDetails {
  type?: TesseraErrorType;
  /** Seconds to wait before trying again (a rate limit). */
  retryAfter?: number;
}

export class TesseraError extends Error {
  readonly code: TesseraErrorCode;
  readonly type: TesseraErrorType;
  /** Set only for a rate limit (`declare`: no own property otherwise, whatever the compile target). */
  declare readonly retryAfter?: number;

  constructor(code: TesseraErrorCode, message: string, details: TesseraErrorDetails = {}) {
    super(message);
    this.name = 'TesseraError';
    this.code = code;
    this.type = details.type ?? errorTypeOf(code);
    if (details.retryAfter !== undefined) this.retryAfter = details.retryAfter;
  }
}
