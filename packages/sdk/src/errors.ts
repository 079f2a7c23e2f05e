/**
 * Errors thrown by the SDK. Errors made by Tessera mirror its envelope
 * `{"error":{"type","code","message","param?","requestId"}}`; one subclass per `type`, so callers
 * can `catch (e) { if (e instanceof TesseraCardDataError) ... }` or switch on `e.code`
 * (the codes are listed in docs/errors.md).
 *
 * A PSP's own error status (for example 402 for a declined card) is NOT thrown: proxy.forward
 * returns it, because it is the PSP's answer, not Tessera's.
 */

/** Base class of everything the SDK throws. */
export class TesseraSdkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface ApiErrorFields {
  status: number;
  type: string;
  code: string;
  message: string;
  param?: string | undefined;
  requestId?: string | undefined;
  /** Seconds from the Retry-After header (429, 503), when the server sent one. */
  retryAfterSeconds?: number | undefined;
}

/** An error response made by Tessera (it carried the `x-tessera-error` header). */
export class TesseraApiError extends TesseraSdkError {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(fields: ApiErrorFields) {
    super(fields.message);
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.requestId = fields.requestId;
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }
}

/** 400, 413, 415: the request is wrong; fix it before retrying. */
export class TesseraInvalidRequestError extends TesseraApiError {}
/** 401: missing, unknown or revoked API key, or a caller address the key does not allow. */
export class TesseraAuthenticationError extends TesseraApiError {}
/** 403: a publishable key (`tpk_…`) on a route that needs a secret key (`publishable_key_forbidden`). */
export class TesseraPermissionError extends TesseraApiError {}
/** 404: unknown token (or one of another merchant), unknown route. */
export class TesseraNotFoundError extends TesseraApiError {}
/** 422: a placeholder's data is missing, e.g. the CVV has expired. */
export class TesseraCardDataError extends TesseraApiError {}
/** 429: retry after `retryAfterSeconds`. */
export class TesseraRateLimitError extends TesseraApiError {}
/**
 * 502, 504 made by Tessera: the PSP was unreachable, too slow, or answered too much, or
 * (`psp_outcome_unknown`) the request may have reached the PSP but its answer was lost. The SDK
 * never retries; with `psp_timeout` or `psp_outcome_unknown` check with the PSP before paying
 * again under a new idempotency key (the same key replays this answer).
 */
export class TesseraPspError extends TesseraApiError {}
/** 500, 503, 504 and anything unrecognised: a Tessera-side problem; safe to retry with an idempotency key. */
export class TesseraServerError extends TesseraApiError {}

const BY_TYPE: Record<string, new (fields: ApiErrorFields) => TesseraApiError> = {
  invalid_request_error: TesseraInvalidRequestError,
  authentication_error: TesseraAuthenticationError,
  permission_error: TesseraPermissionError,
  not_found_error: TesseraNotFoundError,
  card_data_error: TesseraCardDataError,
  rate_limit_error: TesseraRateLimitError,
  psp_error: TesseraPspError,
  api_error: TesseraServerError,
};

export function apiErrorFrom(fields: ApiErrorFields): TesseraApiError {
  const ErrorClass = BY_TYPE[fields.type] ?? TesseraServerError;
  return new ErrorClass(fields);
}

/** The request could not be sent or no answer arrived (DNS, refused, reset). Nothing is known about its effect. */
export class TesseraConnectionError extends TesseraSdkError {}

/** No complete answer within the timeout. The request may still have been processed. */
export class TesseraTimeoutError extends TesseraSdkError {
  constructor(readonly timeoutMs: number) {
    super(`No answer from Tessera within ${timeoutMs} ms.`);
  }
}
