/**
 * `@tessera/js`: loads tessera.js, Tessera's browser SDK, from your Tessera fields origin and
 * gives it types. The card fields themselves always come from that origin (that is what keeps
 * card data off your page and your PCI scope at SAQ A), so this package bundles no card code.
 *
 *   const Tessera = await loadTessera({ fieldsOrigin: 'https://fields.tessera.example' });
 *   const card = Tessera('tpk_live_…').cardFields({ container: '#card' });
 */
import type { TesseraFactory } from './shared/api';
import type { TesseraError } from './shared/errors';

export type {
  AcceptedBrand,
  CardBrand,
  ChangeEventPayload,
  CvcResult,
  CvcSessionGrant,
  FieldErrorCode,
  FieldName,
  TesseraErrorType,
  TokenizeResult,
} from './shared/protocol';
/**
 * The class of every error tessera.js throws, rejects with or emits (`error` event). At run time it
 * is `Tessera.TesseraError` (the class lives in tessera.js, loaded from the fields origin), so
 * `err instanceof Tessera.TesseraError`, or isTesseraError(err) below.
 */
export type { TesseraError, TesseraErrorCode, TesseraErrorDetails } from './shared/errors';
export type { FieldsStyle, StateStyle, StyleProperty, StyleState } from './shared/style';
export type { Appearance, AppearanceRules, AppearanceVariables, FieldTexts, RuleSelector, Theme } from './shared/appearance';
// Types only: this file also runs as a plain script in a browser (loadTessera), where a require() would fail. The
// texts themselves: `@tessera/js/locale`.
export type { FieldsText, Locale, LocaleOption } from './shared/locale';
export type {
  CardFields,
  CardFieldsEventMap,
  CardFieldsEventName,
  CardFieldsOptions,
  CardFieldsUpdate,
  CvcField,
  CvcFieldOptions,
  CvcFieldUpdate,
  FieldsFrame,
  PresentationOptions,
  TesseraFactory,
  TesseraInstance,
  TesseraOptions,
} from './shared/api';

export const TESSERA_JS_PATH = '/js/v1/tessera.js';

/** Whether `err` is a TesseraError of tessera.js (by its shape: the class itself lives in tessera.js). */
export function isTesseraError(err: unknown): err is TesseraError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown; type?: unknown; message?: unknown };
  return e.name === 'TesseraError' && typeof e.code === 'string' && typeof e.type === 'string' && typeof e.message === 'string';
}

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
