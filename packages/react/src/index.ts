/**
 * `@tessera/react`: Tessera's hosted card fields as React components. The fields themselves always
 * come from your Tessera fields origin, in an iframe: no card data reaches React, your page or your
 * bundle (SAQ A).
 *
 *   <TesseraProvider publishableKey="tpk_live_…" fieldsOrigin="https://fields.tessera.example" integrity="sha384-…">
 *     <CardFields ref={card} onChange={(e) => setComplete(e.complete)} />
 *   </TesseraProvider>
 */
export { TesseraProvider, useTessera, useTesseraLoadError, type TesseraProviderProps } from './TesseraProvider';
export { CardFields, type CardFieldsHandle, type CardFieldsProps } from './CardFields';
export { CvcField, type CvcFieldHandle, type CvcFieldProps } from './CvcField';
export type { FieldsEventProps } from './useFieldsFrame';
export { isTesseraError } from '@tessera/js';
export type {
  CardFields as TesseraCardFields,
  CardFieldsEventMap,
  CardFieldsEventName,
  CardFieldsUpdate,
  ChangeEventPayload,
  CvcField as TesseraCvcField,
  CvcFieldUpdate,
  CvcResult,
  CvcSessionGrant,
  TesseraError,
  TesseraErrorCode,
  TesseraErrorType,
  TesseraInstance,
  TesseraOptions,
  TokenizeResult,
} from './sdk';
