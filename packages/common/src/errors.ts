/**
 * Every error Tessera itself produces has a code from this catalogue. The gateway turns it into
 * the documented envelope; the gRPC services carry it across in metadata (see packages/protos/src/grpcErrors.ts).
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'card_data_error'
  | 'rate_limit_error'
  | 'psp_error'
  | 'api_error';

interface ErrorSpec {
  status: number;
  type: ErrorType;
  message: string;
}

export const ERROR_CATALOGUE = {
  invalid_json: { status: 400, type: 'invalid_request_error', message: 'The request body is not valid JSON.' },
  invalid_request: { status: 400, type: 'invalid_request_error', message: 'The request is not valid.' },
  parameter_missing: { status: 400, type: 'invalid_request_error', message: 'A required parameter is missing.' },
  parameter_invalid: { status: 400, type: 'invalid_request_error', message: 'A parameter has an invalid value.' },
  parameter_unknown: { status: 400, type: 'invalid_request_error', message: 'The request contains an unknown parameter.' },
  card_number_invalid: { status: 400, type: 'invalid_request_error', message: 'The card number is not valid.' },
  card_expired: { status: 400, type: 'invalid_request_error', message: 'The card has expired.' },
  cvv_invalid: { status: 400, type: 'invalid_request_error', message: 'The card verification value is not valid.' },
  test_card_in_live_mode: { status: 400, type: 'invalid_request_error', message: 'Test cards cannot be used with a live API key.' },
  live_card_in_test_mode: { status: 400, type: 'invalid_request_error', message: 'Test API keys accept only the published test cards.' },
  number_is_alias: {
    status: 400,
    type: 'invalid_request_error',
    message:
      'The number is an alias of one of your tokens, not a card: use the alias where a token is accepted (docs/api.md, Aliases). Aliases must never be tokenized or sent to a PSP as a card.',
  },
  return_url_not_registered: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The return or cancel URL is not one of the merchant’s registered URLs (exact scheme, host, port and path).',
  },
  webhook_endpoint_limit_reached: {
    status: 400,
    type: 'invalid_request_error',
    message: 'This merchant has the most webhook endpoints a mode may have (16); delete one before adding another.',
  },
  multiple_cards: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request holds more than one card number; an inbound route takes one card per request. Nothing was forwarded.',
  },
  card_expiry_missing: {
    status: 400,
    type: 'invalid_request_error',
    message: "The request holds a card number but no expiry in the places the inbound route's filters name. Nothing was forwarded.",
  },
  psp_destination_forbidden: { status: 400, type: 'invalid_request_error', message: 'The PSP destination is not allowed.' },
  placeholder_not_encodable: {
    status: 400,
    type: 'invalid_request_error',
    message: '[CARD_HOLDER] can be filled in only for JSON, XML or form-urlencoded bodies: set such a Content-Type in pspHeaders.',
  },
  api_key_missing: { status: 401, type: 'authentication_error', message: 'No API key was provided in the x-api-key header.' },
  api_key_invalid: { status: 401, type: 'authentication_error', message: 'The API key is invalid or has been revoked.' },
  ip_not_allowed: { status: 401, type: 'authentication_error', message: 'The API key is not allowed from this IP address.' },
  origin_not_allowed: { status: 401, type: 'authentication_error', message: 'The API key is not allowed from this website origin.' },
  proxy_authentication_required: {
    status: 407,
    type: 'authentication_error',
    message: 'The forward proxy takes a secret key (tsk_…) as the Proxy-Authorization password: HTTPS_PROXY=http://x:tsk_…@host:port.',
  },
  admin_session_required: { status: 401, type: 'authentication_error', message: 'Log in to the dashboard first.' },
  login_failed: { status: 401, type: 'authentication_error', message: 'The email or password is not correct.' },
  mfa_code_required: {
    status: 401,
    type: 'authentication_error',
    message: 'Enter the 6-digit code from your authenticator app, or one of your recovery codes.',
  },
  mfa_code_invalid: {
    status: 401,
    type: 'authentication_error',
    message: 'The authentication code is not correct, has expired or was already used.',
  },
  mfa_enrolment_required: {
    status: 403,
    type: 'permission_error',
    message: 'Set up two-factor authentication before using the dashboard.',
  },
  csrf_token_invalid: { status: 403, type: 'permission_error', message: 'The CSRF token is missing or does not match the session.' },
  publishable_key_forbidden: {
    status: 403,
    type: 'permission_error',
    message: 'A publishable key can only create tokens through Tessera card fields or hosted page; use a secret key on this route.',
  },
  cvc_session_required: {
    status: 403,
    type: 'permission_error',
    message:
      "A CVC can be re-collected in a browser only under a CVC session the merchant's server opened for this token (POST /v1/token/{token}/cvc-sessions).",
  },
  forward_proxy_host_forbidden: {
    status: 403,
    type: 'permission_error',
    message: "The host is on none of the outbound routes of this key's merchant and mode.",
  },
  forward_proxy_connect_only: {
    status: 405,
    type: 'invalid_request_error',
    message: 'This port is the forward proxy: it takes CONNECT only (set HTTPS_PROXY, docs/proxies.md).',
  },
  merchant_forbidden: { status: 403, type: 'permission_error', message: 'This operator cannot manage that merchant.' },
  second_operator_required: {
    status: 403,
    type: 'permission_error',
    message: 'This takes two platform operators with a second factor: one requests it, another approves it (never the same one).',
  },
  shred_order_not_found: { status: 404, type: 'not_found_error', message: 'No such shred order.' },
  second_factor_required: {
    status: 403,
    type: 'permission_error',
    message: 'This action needs an operator with a second factor set up (POST /admin/v1/mfa/enrolment).',
  },
  import_not_found: { status: 404, type: 'not_found_error', message: 'No such import.' },
  import_not_ready: { status: 409, type: 'invalid_request_error', message: 'The import is not in a state that allows this.' },
  shred_order_not_pending: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This shred order is no longer waiting for approval (already approved, carried out or cancelled).',
  },
  export_order_not_found: { status: 404, type: 'not_found_error', message: 'No such export order.' },
  export_order_not_pending: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This export order is no longer waiting for approval (already approved, carried out or cancelled).',
  },
  export_recipient_not_registered: {
    status: 422,
    type: 'invalid_request_error',
    message: 'Cards are exported only to a recipient key registered for this merchant (POST /admin/v1/merchants/{id}/export-recipients).',
  },
  export_recipient_not_found: {
    status: 404,
    type: 'not_found_error',
    message: 'No recipient with this fingerprint is registered for this merchant.',
  },
  export_recipient_exists: {
    status: 409,
    type: 'invalid_request_error',
    message: 'A recipient with this key is already registered for this merchant.',
  },
  export_recipient_key_invalid: {
    status: 400,
    type: 'invalid_request_error',
    message:
      'The recipient key must be an armored OpenPGP public key that can encrypt (RSA of at least 3072 bits, or an elliptic-curve key).',
  },
  export_file_unavailable: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This export has no file to download: it is not done yet, it failed, or its file expired.',
  },
  export_rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    message: 'This merchant has had as many export requests today (UTC) as EXPORT_MAX_PER_MERCHANT_PER_DAY allows.',
  },
  api_key_not_found: { status: 404, type: 'not_found_error', message: 'No such API key.' },
  form_session_not_found: { status: 404, type: 'not_found_error', message: 'No such form session.' },
  cvc_session_not_found: { status: 404, type: 'not_found_error', message: 'No such CVC session for this token.' },
  token_not_found: { status: 404, type: 'not_found_error', message: 'No such token.' },
  webhook_endpoint_not_found: { status: 404, type: 'not_found_error', message: 'No such webhook endpoint for this merchant and mode.' },
  event_not_found: { status: 404, type: 'not_found_error', message: 'No such event (it may have passed the retention time).' },
  route_not_found: { status: 404, type: 'not_found_error', message: 'No such route.' },
  proxy_route_not_found: { status: 404, type: 'not_found_error', message: 'No such proxy route (inbound or outbound) for this merchant.' },
  page_script_not_found: {
    status: 404,
    type: 'not_found_error',
    message: 'No such page or script in the payment-page inventory (it may have passed the retention time).',
  },
  request_log_entry_not_found: {
    status: 404,
    type: 'not_found_error',
    message: 'No such entry in the request log (it may have passed the retention time).',
  },
  idempotency_key_reused: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This Idempotency-Key was already used with a different request.',
  },
  idempotency_in_progress: {
    status: 409,
    type: 'invalid_request_error',
    message: 'A request with this Idempotency-Key is still being processed; retry shortly.',
  },
  idempotent_replay_unavailable: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The first answer to this Idempotency-Key was too large to keep, so it cannot be replayed; the request was not run again.',
  },
  form_session_expired: {
    status: 410,
    type: 'invalid_request_error',
    message: 'This payment page has expired. Go back to the shop and start again.',
  },
  form_session_used: {
    status: 410,
    type: 'invalid_request_error',
    message: 'This payment page has already been used. Go back to the shop to see the result.',
  },
  form_session_processing: {
    status: 409,
    type: 'invalid_request_error',
    message: 'A card for this payment page is being processed. Wait a moment, then reload the page to see the result.',
  },
  payments_unavailable: {
    status: 503,
    type: 'api_error',
    message: 'Payments are temporarily unavailable on this page. Try again later or go back to the shop.',
  },
  payment_declined: {
    status: 402,
    type: 'psp_error',
    message: 'The card was declined. Try another card.',
  },
  cvc_session_expired: {
    status: 410,
    type: 'invalid_request_error',
    message: 'This CVC session has expired; the merchant’s server opens a new one.',
  },
  cvc_session_used: {
    status: 410,
    type: 'invalid_request_error',
    message: 'This CVC session was already used; the merchant’s server opens a new one.',
  },
  proxy_route_address_taken: {
    status: 409,
    type: 'invalid_request_error',
    message: 'Another inbound route already serves this path or host; paths and hosts are unique across Tessera.',
  },
  proxy_route_limit_reached: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The merchant has as many proxy routes as allowed (100); delete one first.',
  },
  mfa_already_enabled: {
    status: 409,
    type: 'invalid_request_error',
    message: 'Two-factor authentication is already on for this operator; a platform administrator can reset it with the CLI.',
  },
  mfa_enrolment_not_started: {
    status: 409,
    type: 'invalid_request_error',
    message: 'Start the two-factor set-up first; a started set-up expires after 10 minutes.',
  },
  card_data_unmatched: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request holds a card number in a place no filter of its route takes card data from; it was not sent on.',
  },
  body_too_large: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', message: 'Request bodies must be sent as application/json.' },
  cvv_unavailable: { status: 422, type: 'card_data_error', message: 'The CVV for this token is no longer available.' },
  holder_name_unavailable: { status: 422, type: 'card_data_error', message: 'No card holder name was stored for this token.' },
  rendered_body_too_large: {
    status: 422,
    type: 'invalid_request_error',
    message: 'With card data filled in, pspBody would exceed the size limit.',
  },
  rate_limited: { status: 429, type: 'rate_limit_error', message: 'Too many requests.' },
  challenge_required: {
    status: 429,
    type: 'rate_limit_error',
    message:
      'The publishable key is under card-testing pressure: solve a challenge from GET /v1/browser/challenge and send the solution in the x-tessera-challenge header.',
  },
  idempotency_quota_exceeded: {
    status: 429,
    type: 'rate_limit_error',
    message: 'This merchant holds as many stored Idempotency-Key answers as it may; new keys are refused until older answers expire.',
  },
  internal_error: { status: 500, type: 'api_error', message: 'An internal error occurred.' },
  psp_unreachable: { status: 502, type: 'psp_error', message: 'The PSP could not be reached.' },
  psp_response_too_large: { status: 502, type: 'psp_error', message: 'The PSP response exceeds the size limit.' },
  psp_outcome_unknown: {
    status: 502,
    type: 'psp_error',
    message: 'The request may have reached the PSP, but its answer was lost. Check with the PSP before paying again.',
  },
  service_unavailable: { status: 503, type: 'api_error', message: 'The service is temporarily unavailable.' },
  upstream_timeout: { status: 504, type: 'api_error', message: 'An internal service did not answer in time.' },
  psp_timeout: { status: 504, type: 'psp_error', message: 'The PSP did not answer in time.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, code);
}

export interface TesseraErrorOptions {
  message?: string;
  param?: string;
  cause?: unknown;
  /** How long to wait before trying again, in whole seconds: the gateway answers it as Retry-After (RFC 9110 §10.2.3). */
  retryAfterSeconds?: number;
}

export class TesseraError extends Error {
  readonly code: ErrorCode;
  readonly type: ErrorType;
  readonly status: number;
  readonly param?: string;
  /** Not part of the envelope body: the gateway's envelope writer sends it as the Retry-After header. */
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, opts: TesseraErrorOptions = {}) {
    const spec: ErrorSpec = ERROR_CATALOGUE[code];
    super(opts.message ?? spec.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TesseraError';
    this.code = code;
    this.type = spec.type;
    this.status = spec.status;
    if (opts.param !== undefined) this.param = opts.param;
    if (opts.retryAfterSeconds !== undefined) this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  toJSON(): { type: ErrorType; code: ErrorCode; message: string; param?: string } {
    return {
      type: this.type,
      code: this.code,
      message: this.message,
      ...(this.param !== undefined ? { param: this.param } : {}),
    };
  }
}

export function isTesseraError(err: unknown): err is TesseraError {
  return err instanceof TesseraError;
}
