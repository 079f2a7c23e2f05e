/** Request and response shapes of the Tessera REST API (/v1); see the OpenAPI document at /v1/openapi.json. */

export interface CardInput {
  /** Digits; spaces and hyphens are removed. Test keys accept only the published test cards. */
  number: string;
  holderName?: string;
  expiryMonth: number;
  /** Four digits. */
  expiryYear: number;
  /** 3 digits (4 for amex). An integer is left-padded with zeros. */
  cvv?: number | string;
}

export interface TokenRecord {
  /** `tok.` + random string. */
  token: string;
  last4: string;
  brand: string;
  expiryMonth: number;
  expiryYear: number;
  createdAt: string;
  expiresAt: string | null;
  cvvAvailable: boolean;
  holderNameAvailable: boolean;
  /**
   * True for a token made in a browser (Tessera's card fields or hosted page) that you have not
   * retained yet: it expires at `expiresAt` (BROWSER_TOKEN_TTL_SECONDS after creation) unless
   * your server calls `tokens.retain(token)`.
   */
  provisional: boolean;
}

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ProxyRequest {
  method: HttpMethod;
  token: string;
  pspUrl: string;
  pspHeaders?: Record<string, string>;
  /**
   * Body template with placeholders `[CARD_NUMBER]`, `[CARD_EXPIRY_MONTH]`, `[CARD_EXPIRY_YEAR]`,
   * `[CARD_CVV]`, `[CARD_HOLDER]`, encoded for the Content-Type in pspHeaders.
   */
  pspBody?: string;
}

/** The PSP's answer, as Tessera passed it through. */
export interface PspResponse {
  status: number;
  /** The PSP's headers (hop-by-hop ones removed) plus Tessera's x-request-id and x-tessera-* headers. */
  headers: Headers;
  /** The PSP's body bytes, unchanged. */
  body: Uint8Array;
  /** The body decoded as UTF-8. */
  text(): string;
  /** The body parsed as JSON; throws a SyntaxError when it is not JSON. */
  json<T = unknown>(): T;
  /** `x-tessera-request-id`: quote it when you talk to support. */
  requestId: string | undefined;
  /** `x-tessera-psp-ms`: time the PSP took. */
  pspMs: number | undefined;
  /** `x-tessera-total-ms`: time Tessera took, PSP included. */
  totalMs: number | undefined;
}

export interface DryRunResult {
  object: 'proxy_dry_run';
  request: { method: string; url: string; headers: Record<string, string>; body: string | null };
  placeholders: {
    filled: string[];
    unfillable: Array<{ placeholder: string; code: string; message: string }>;
    unknown: string[];
  };
  destination: { allowed: boolean; code?: string; message?: string };
  wouldSend: boolean;
}

export interface RequestOptions {
  /**
   * Sent as the `Idempotency-Key` header, so that a retried request is recognised. Use one key
   * per logical operation (for example your order id + attempt). See the README for what the
   * server does with it.
   */
  idempotencyKey?: string;
  /** Overrides the client's timeoutMs for this call. */
  timeoutMs?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Sent as `x-request-id` (letters, digits, `_`, `.`, `-`; at most 128), echoed in logs and errors. */
  requestId?: string;
}
