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

/** POST /v1/token's body: a card, and whether to answer the merchant's existing token for it. */
export interface TokenCreateInput extends CardInput {
  /**
   * true: if you already have a token for this card number in this mode (made with or without
   * `dedupe`; not deleted, not provisional), answer it (HTTP 200), updated with this expiry,
   * holder name and CVV, instead of a new one (HTTP 201).
   */
  dedupe?: boolean;
  /**
   * Aliases to give the token, one per format (docs/api.md, Aliases): other names of it that fit
   * where a card number or an id used to go, accepted wherever the token is. Never send an alias to
   * a PSP as a card.
   */
  aliasFormats?: AliasFormat[];
}

/** `card_bin_last4`: Luhn-valid, the card's length, first 6 and last 4 kept; `card_last4`: last 4 kept; `uuid`: a random v4 UUID. */
export type AliasFormat = 'card_bin_last4' | 'card_last4' | 'uuid';

/**
 * PATCH /v1/token/{token}: a re-issued card with the same number. Give the expiry whole (month and
 * year), the holder name, or both; the number never changes (a new number is a new token).
 */
export type TokenUpdateInput =
  | { expiryMonth: number; expiryYear: number; holderName?: string }
  | { expiryMonth?: undefined; expiryYear?: undefined; holderName: string };

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
  /** The first six digits of the card number; null for tokens made before Tessera recorded it. */
  bin: string | null;
  /**
   * Keyed hash of the card number, per merchant and mode: the same card tokenized again by you in
   * the same mode has the same fingerprint. null for tokens made before Tessera recorded it.
   */
  fingerprint: string | null;
  /** The token's aliases by format (`{}` when it has none); each is accepted wherever the token is. */
  aliases: Partial<Record<AliasFormat, string>>;
}

/**
 * A CVC session (POST /v1/token/{token}/cvc-sessions): the single-use grant the browser's CVC-only
 * field needs. Hand `{ token, secret }` to the checkout page for `tessera.cvcField({ cvcSession })`;
 * the secret is shown only in this answer.
 */
export interface CvcSession {
  object: 'cvc_session';
  token: string;
  /** `cvcs_…`: lets one CVC be attached to `token`, once, until `expiresAt`. */
  secret: string;
  /** CVC_SESSION_TTL_SECONDS (10 min) after it was opened. */
  expiresAt: string;
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

export type FormSessionLocale = 'en' | 'de' | 'fr' | 'es' | 'nl';

/** POST /v1/form-sessions: a hosted payment page for one shopper. */
export interface FormSessionCreateInput {
  /** A registered return URL (exactly), any query kept; where the shopper lands, signed (verifyFormSessionReturn). */
  returnUrl: string;
  /** A registered URL for the page's Cancel link and its "Return to …" links. */
  cancelUrl?: string;
  /** In the currency's minor unit (1234 is €12.34); with `currency`. */
  amount?: number;
  /** ISO 4217 in lower case: `eur`, `usd`, `jpy`… */
  currency?: string;
  /**
   * A registered URL of yours that Tessera POSTs each card's token to before the redirect, for you
   * to charge (verifyCompletionSignature; docs/api.md, "The completion call"). Needs amount and currency.
   */
  completionUrl?: string;
  merchantName?: string;
  /** https (http with test keys only). */
  logoUrl?: string;
  /** The button's text; default "Pay €12.34" in the page's locale. */
  submitLabel?: string;
  locale?: FormSessionLocale;
}

export interface FormSessionPayment {
  /** processing: Tessera awaits your completion endpoint; unknown: it did not answer a known outcome (settle it from your records). */
  status: 'processing' | 'succeeded' | 'declined' | 'unknown';
  attempts: number;
  declineMessage: string | null;
}

export interface FormSession {
  id: string;
  object: 'form_session';
  status: 'open' | 'completed' | 'expired' | 'canceled';
  /** The hosted payment page: send the shopper's browser here. */
  url: string;
  returnUrl: string;
  cancelUrl: string | null;
  createdAt: string;
  expiresAt: string;
  completedAt: string | null;
  /** Once completed: a provisional token; retain it (tokens.retain) or it expires. */
  token: string | null;
  card: { brand: string; last4: string; expiryMonth: number; expiryYear: number } | null;
  amount: number | null;
  currency: string | null;
  completionUrl: string | null;
  merchantName: string | null;
  logoUrl: string | null;
  submitLabel: string | null;
  locale: FormSessionLocale;
  /** Only with a completionUrl, once a card was sent to it. */
  payment: FormSessionPayment | null;
}

export interface FormSessionListParams {
  /** 1 to 100 (default 10). */
  limit?: number;
  /** The last id of the previous page. */
  startingAfter?: string;
  status?: FormSession['status'];
}

export interface FormSessionList {
  object: 'list';
  data: FormSession[];
  hasMore: boolean;
}

/** A webhook endpoint (docs/webhooks.md, "Webhook endpoints"), of one merchant and mode. */
export interface WebhookEndpoint {
  /** `we_…`. */
  id: string;
  object: 'webhook_endpoint';
  url: string;
  /** Event types (docs/webhooks.md), or `["*"]` for all. */
  enabledEvents: string[];
  status: 'enabled' | 'disabled';
  createdAt: string;
  /** `whsec_…`: only in the answer of create and rotateSecret. Keep it; it is never shown again. */
  secret?: string;
}

export interface WebhookEndpointCreateInput {
  url: string;
  enabledEvents: string[];
}

export interface WebhookEndpointList {
  object: 'list';
  data: WebhookEndpoint[];
  hasMore: boolean;
}

export interface WebhookSecretRotateInput {
  /** How long the old secret keeps signing deliveries beside the new one, 0 to 7 days (default 24 h). */
  expiresInSeconds?: number;
}

/** An event record (docs/webhooks.md, "Events"): no card data beyond brand, last4 and expiry. */
export interface TesseraEvent<TObject = Record<string, unknown>> {
  /** `evt_…`. */
  id: string;
  object: 'event';
  type: string;
  /** Unix seconds. */
  created: number;
  mode: 'test' | 'live';
  data: { object: TObject };
}

export interface EventListParams {
  type?: string;
  limit?: number;
  startingAfter?: string;
}

export interface EventList {
  object: 'list';
  data: TesseraEvent[];
  hasMore: boolean;
}
