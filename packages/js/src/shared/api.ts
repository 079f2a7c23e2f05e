/**
 * What tessera.js gives the merchant's page: the types both the script itself (sdk/tessera.ts)
 * and the `@tessera/js` loader (index.ts) describe it with. Types only: nothing here runs.
 */
import type { ChangeEventPayload, CvcResult, CvcSessionGrant, FieldName, TokenizeResult } from './protocol';
import type { FieldsStyle } from './style';

export interface CardFieldsOptions {
  /** A CSS selector or the element the fields are placed in. */
  container: string | Element;
  /** Per state (base, focus, invalid, complete), whitelisted CSS properties; `url(` is refused. */
  style?: FieldsStyle;
  /** Show a "Name on card" input (autocomplete cc-name). */
  holderName?: boolean;
  /** The iframe's accessible title (default "Secure card payment input frame"). */
  title?: string;
}

export type CardFieldsEventMap = {
  ready: Record<string, never>;
  focus: { field: FieldName };
  blur: { field: FieldName };
  change: ChangeEventPayload;
};
export type CardFieldsEventName = keyof CardFieldsEventMap;

/** What the card fields and the CVC-only field both offer: events, and the frame's focus, clear and removal. */
export interface FieldsFrame<Self> {
  on<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): Self;
  off<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): Self;
  focus(): void;
  clear(): void;
  destroy(): void;
}

export interface CardFields extends FieldsFrame<CardFields> {
  /** Rejects with an Error whose `code` says why (e.g. `invalid_number`, `origin_not_allowed`). */
  tokenize(): Promise<TokenizeResult>;
}

export interface CvcFieldOptions {
  /**
   * The CVC session your server opened for the token whose CVC the returning shopper re-enters
   * (POST /v1/token/{token}/cvc-sessions with your secret key): its `{ token, secret }`, or the
   * whole answer. Single use, valid for minutes: open one per checkout page.
   */
  cvcSession: CvcSessionGrant;
  /** A CSS selector or the element the field is placed in. */
  container: string | Element;
  style?: FieldsStyle;
  /** The iframe's accessible title. */
  title?: string;
}

/**
 * The CVC-only field: a returning shopper types the CVC of a stored card; `submit()` attaches it to
 * the session's token (for its next render only, within CVV_TTL_SECONDS) and resolves with the
 * token; your server already has the card's details. The CVC goes from the iframe to Tessera,
 * never through the page. Rejects with `cvc_session_used`, `cvc_session_expired`, … when the session
 * cannot be used (open a new one).
 */
export interface CvcField extends FieldsFrame<CvcField> {
  submit(): Promise<CvcResult>;
}

export interface TesseraOptions {
  /** Where the card fields are served; default: the origin tessera.js itself was loaded from. */
  fieldsOrigin?: string;
  /**
   * Report this page's scripts and meta Content-Security-Policy to Tessera for the dashboard's
   * script inventory (docs/browser.md, "SAQ A kit"); default true. `false`: nothing is reported.
   */
  pageReport?: boolean;
}

export interface TesseraInstance {
  cardFields(options: CardFieldsOptions): CardFields;
  cvcField(options: CvcFieldOptions): CvcField;
}

/** `Tessera`, the global tessera.js defines. */
export type TesseraFactory = (publishableKey: string, options?: TesseraOptions) => TesseraInstance;
