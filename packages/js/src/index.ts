/**
 * `@tessera/js`: loads tessera.js, Tessera's browser SDK, from your Tessera fields origin and
 * gives it types. The card fields themselves always come from that origin (that is what keeps
 * card data off your page and your PCI scope at SAQ A), so this package bundles no card code.
 *
 *   const Tessera = await loadTessera({ fieldsOrigin: 'https://fields.tessera.example' });
 *   const card = Tessera('tpk_live_…').cardFields({ container: '#card' });
 */
import type { ChangeEventPayload, FieldName, TokenizeResult } from './shared/protocol';
import type { FieldsStyle } from './shared/style';

export type { CardBrand, ChangeEventPayload, FieldErrorCode, FieldName, TokenizeResult } from './shared/protocol';
export type { FieldsStyle, StateStyle, StyleProperty, StyleState } from './shared/style';

export const TESSERA_JS_PATH = '/js/v1/tessera.js';

export interface CardFieldsOptions {
  /** A CSS selector or the element the fields are placed in. */
  container: string | Element;
  /** Per state (base, focus, invalid, complete), whitelisted CSS properties; `url(` is refused. */
  style?: FieldsStyle;
  /** Show a "Name on card" input. */
  holderName?: boolean;
  /** The iframe's accessible title (default "Secure card payment input frame"). */
  title?: string;
}

export interface CardFieldsEventMap {
  ready: Record<string, never>;
  focus: { field: FieldName };
  blur: { field: FieldName };
  change: ChangeEventPayload;
}

export interface CardFields {
  on<E extends keyof CardFieldsEventMap>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): CardFields;
  off<E extends keyof CardFieldsEventMap>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): CardFields;
  /** Rejects with an Error whose `code` says why (e.g. `invalid_number`, `origin_not_allowed`). */
  tokenize(): Promise<TokenizeResult>;
  focus(): void;
  clear(): void;
  destroy(): void;
}

export interface CvcFieldOptions {
  /** The token (of this merchant and mode) whose CVC the returning shopper re-enters. */
  token: string;
  container: string | Element;
  style?: FieldsStyle;
  title?: string;
}

/** The CVC-only field: the CVC goes from the iframe to Tessera, never through your page. */
export interface CvcField {
  on<E extends keyof CardFieldsEventMap>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): CvcField;
  off<E extends keyof CardFieldsEventMap>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): CvcField;
  /** Attaches the CVC to the token (used by its next render only); resolves with the token and card details. */
  submit(): Promise<TokenizeResult>;
  focus(): void;
  clear(): void;
  destroy(): void;
}

export interface TesseraInstance {
  cardFields(options: CardFieldsOptions): CardFields;
  cvcField(options: CvcFieldOptions): CvcField;
}

export type TesseraFactory = (publishableKey: string, options?: { fieldsOrigin?: string }) => TesseraInstance;

export interface LoadOptions {
  /** Your Tessera fields origin (FIELDS_ORIGIN), e.g. `https://fields.tessera.example`. */
  fieldsOrigin: string;
  /** The SRI hash published in docs/browser.md; pins the exact script your page runs. */
  integrity?: string;
}

type WithTessera = Window & { Tessera?: TesseraFactory };

let loading: Promise<TesseraFactory> | undefined;

/** Adds tessera.js to the page once (later calls share the same promise) and resolves to `Tessera`. */
export function loadTessera(options: LoadOptions): Promise<TesseraFactory> {
  const existing = (window as WithTessera).Tessera;
  if (existing) return Promise.resolve(existing);
  if (loading) return loading;
  const origin = new URL(options.fieldsOrigin).origin;
  loading = new Promise<TesseraFactory>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = `${origin}${TESSERA_JS_PATH}`;
    if (options.integrity) {
      script.integrity = options.integrity;
      script.crossOrigin = 'anonymous';
    }
    script.onload = () => {
      const factory = (window as WithTessera).Tessera;
      if (factory) resolve(factory);
      else reject(new Error('tessera.js loaded but did not define Tessera'));
    };
    script.onerror = () => {
      loading = undefined;
      reject(new Error(`could not load ${script.src}`));
    };
    document.head.appendChild(script);
  });
  return loading;
}
