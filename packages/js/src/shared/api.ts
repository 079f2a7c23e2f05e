/**
 * What tessera.js gives the merchant's page: the types both the script itself (sdk/tessera.ts)
 * and the `@tessera/js` loader (index.ts) describe it with. Types only: nothing here runs.
 */
import type { TesseraError } from './errors';
import type { AcceptedBrand, ChangeEventPayload, CvcResult, CvcSessionGrant, FieldName, TokenizeResult } from './protocol';
import type { FieldsStyle } from './style';
import type { Appearance, FieldTexts } from './appearance';
import type { LocaleOption } from './locale';

/**
 * How the fields look and read (docs/browser.md "Appearance and locales"); checked at once, a
 * failure throws TesseraError 'invalid_appearance' (or 'invalid_locale').
 */
export interface PresentationOptions {
  /** A theme ('default', 'night', 'flat') with variables and rules; text colours must pass WCAG AA contrast. */
  appearance?: Appearance;
  /** The language of labels, placeholders and messages; default: the Tessera instance's, else 'en'. */
  locale?: LocaleOption;
  /** Your own label per input (plain text, at most 80 characters). */
  labels?: FieldTexts;
  /** Your own placeholder per input (plain text, at most 60 characters; '' for none). */
  placeholders?: FieldTexts;
  /** Hide the labels from view; they stay the inputs' accessible names. */
  hideLabels?: boolean;
}

export interface CardFieldsOptions extends PresentationOptions {
  /**
   * A CSS selector or the element the fields are placed in: given, the fields are mounted at once;
   * left out, they are created unmounted and `mount(container)` places them later.
   */
  container?: string | Element;
  /** Per state (base, focus, invalid, complete), whitelisted CSS properties; `url(` is refused. */
  style?: FieldsStyle;
  /** Show a "Name on card" input (autocomplete cc-name). */
  holderName?: boolean;
  /** The iframe's accessible title (default "Secure card payment input frame", in the `locale`). */
  title?: string;
  /**
   * The brands the merchant takes (default: every brand Tessera takes). A card of another brand is
   * shown as not accepted, reported as `brand_not_accepted` in `change`, and never sent.
   */
  acceptedBrands?: AcceptedBrand[];
}

/** What `update()` may change on mounted fields, without reloading them: every option but the container. */
export type CardFieldsUpdate = Omit<CardFieldsOptions, 'container'>;

export type CardFieldsEventMap = {
  ready: Record<string, never>;
  focus: { field: FieldName };
  blur: { field: FieldName };
  change: ChangeEventPayload;
  /**
   * The fields cannot work on this page: refused (`origin_not_allowed`, `api_key_invalid`,
   * `fields_unavailable`) or not loaded (`fields_load_failed`). tokenize() rejects with the same error.
   */
  error: TesseraError;
  /** The shopper pressed Enter in a field; the page decides whether to tokenize. */
  submit: Record<string, never>;
};
export type CardFieldsEventName = keyof CardFieldsEventMap;

/**
 * What the card fields and the CVC-only field both offer: the lifecycle (mount, unmount, destroy),
 * events, and the frame's focus and clear. Event handlers stay across unmount and mount.
 */
export interface FieldsFrame<Self> {
  on<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): Self;
  off<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): Self;
  /**
   * Places the fields in the container (a selector or an element). Throws TesseraError
   * `container_has_fields` when the container already holds Tessera fields, `already_mounted` when
   * these are mounted elsewhere (unmount first), `container_not_found`.
   */
  mount(container: string | Element): void;
  /** Removes the iframe (what was typed is gone); handlers and options stay, and mount() works again. */
  unmount(): void;
  focus(): void;
  clear(): void;
  /** Removes the fields for good: pending calls reject and later calls throw TesseraError `destroyed`. */
  destroy(): void;
}

export interface CardFields extends FieldsFrame<CardFields> {
  /** New options, applied in the mounted iframe without reloading it (what was typed stays). */
  update(options: CardFieldsUpdate): void;
  /** Rejects with a TesseraError whose `code` and `type` say why (e.g. `invalid_number`, `origin_not_allowed`). */
  tokenize(): Promise<TokenizeResult>;
}

export interface CvcFieldOptions extends PresentationOptions {
  /**
   * The CVC session your server opened for the token whose CVC the returning shopper re-enters
   * (POST /v1/token/{token}/cvc-sessions with your secret key): its `{ token, secret }`, or the
   * whole answer. Single use, valid for minutes: open one per checkout page.
   */
  cvcSession: CvcSessionGrant;
  /** A CSS selector or the element the field is placed in; left out: mount(container) later. */
  container?: string | Element;
  style?: FieldsStyle;
  /** The iframe's accessible title. */
  title?: string;
}

/** What `update()` may change on a CVC-only field. */
export type CvcFieldUpdate = Omit<CvcFieldOptions, 'container' | 'cvcSession'>;

/**
 * The CVC-only field: a returning shopper types the CVC of a stored card; `submit()` attaches it to
 * the session's token (for its next render only, within CVV_TTL_SECONDS) and resolves with the
 * token; your server already has the card's details. The CVC goes from the iframe to Tessera,
 * never through the page. Rejects with `cvc_session_used`, `cvc_session_expired`, … when the session
 * cannot be used (open a new one).
 */
export interface CvcField extends FieldsFrame<CvcField> {
  update(options: CvcFieldUpdate): void;
  submit(): Promise<CvcResult>;
}

export interface TesseraOptions {
  /** Where the card fields are served; default: the origin tessera.js itself was loaded from. */
  fieldsOrigin?: string;
  /** The default language of every field this instance makes ('auto': the shopper's browser language). */
  locale?: LocaleOption;
  /**
   * Report this page's scripts and meta Content-Security-Policy to Tessera for the dashboard's
   * script inventory (docs/browser.md, "SAQ A kit"); default true. `false`: nothing is reported.
   */
  pageReport?: boolean;
}

export interface TesseraInstance {
  cardFields(options?: CardFieldsOptions): CardFields;
  cvcField(options: CvcFieldOptions): CvcField;
}

/** `Tessera`, the global tessera.js defines; `Tessera.TesseraError` is the class its errors are made of. */
export interface TesseraFactory {
  (publishableKey: string, options?: TesseraOptions): TesseraInstance;
  readonly TesseraError: typeof TesseraError;
}
