/**
 * The parts of tessera.js this binding drives, as `@tessera/js` types them: the Element-style
 * lifecycle (create without a container, then mount, update, unmount, destroy) and the `error` and
 * `submit` events.
 */
import type {
  CardFields as SdkCardFields,
  CardFieldsEventMap as SdkEventMap,
  CardFieldsOptions as SdkCardFieldsOptions,
  CvcField as SdkCvcField,
  CvcFieldOptions as SdkCvcFieldOptions,
  CvcSessionGrant,
  FieldName,
  TesseraInstance as SdkTesseraInstance,
  TesseraOptions as SdkTesseraOptions,
} from '@tessera/js';

export type { ChangeEventPayload, CvcResult, CvcSessionGrant, FieldName, TokenizeResult } from '@tessera/js';

export type TesseraErrorType = 'validation_error' | 'api_error' | 'network_error' | 'integration_error' | 'rate_limit_error';

/** What tessera.js rejects with and sends as `error` events. */
export interface TesseraErrorLike {
  code: string;
  type: TesseraErrorType;
  message: string;
  retryAfter?: number;
}

export type CardFieldsEventMap = SdkEventMap & { error: TesseraErrorLike; submit: Record<string, never> };
export type CardFieldsEventName = keyof CardFieldsEventMap;

export type CardFieldsOptions = Omit<SdkCardFieldsOptions, 'container'> & {
  container?: string | Element;
  appearance?: unknown;
  locale?: string;
  labels?: Record<string, string>;
  placeholders?: Record<string, string>;
  hideLabels?: boolean;
  acceptedBrands?: string[];
};
export type CvcFieldOptions = Omit<SdkCvcFieldOptions, 'container'> & Omit<CardFieldsOptions, 'holderName'>;

export interface FieldsLifecycle {
  mount(container: string | Element): void;
  unmount(): void;
  update(options: Omit<CardFieldsOptions, 'container'>): void;
  destroy(): void;
  focus(): void;
  clear(): void;
  on<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): unknown;
  off<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): unknown;
}

export type CardFields = Omit<SdkCardFields, 'on' | 'off'> & FieldsLifecycle;
export type CvcField = Omit<SdkCvcField, 'on' | 'off'> & FieldsLifecycle;

export type TesseraOptions = SdkTesseraOptions & { locale?: string };

export interface TesseraInstance {
  cardFields(options: CardFieldsOptions): CardFields;
  cvcField(options: CvcFieldOptions & { cvcSession: CvcSessionGrant }): CvcField;
}

/** Turns the SDK's instance into the lifecycle view (one place to drop when @tessera/js types it). */
export const withLifecycle = (instance: SdkTesseraInstance): TesseraInstance => instance as unknown as TesseraInstance;

export type FocusEvent = { field: FieldName };
