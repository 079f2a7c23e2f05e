/**
 * The parts of tessera.js this binding drives, as `@tessera/js` types them: the Element-style
 * lifecycle (create without a container, then mount, update, unmount, destroy) and its events.
 */
import type { CardFieldsEventMap, CardFieldsEventName } from '@tessera/js';

export type {
  CardFields,
  CardFieldsEventMap,
  CardFieldsEventName,
  CardFieldsOptions,
  CardFieldsUpdate,
  ChangeEventPayload,
  CvcField,
  CvcFieldOptions,
  CvcFieldUpdate,
  CvcResult,
  CvcSessionGrant,
  TesseraError,
  TesseraErrorCode,
  TesseraErrorType,
  TesseraInstance,
  TesseraOptions,
  TokenizeResult,
} from '@tessera/js';

/** What the components need of a tessera.js frame, whether card fields or the CVC-only field. */
export interface FieldsLifecycle {
  mount(container: Element): void;
  unmount(): void;
  /** Only options of the frame's own kind: the component passes back what the page gave it. */
  update(options: never): void;
  destroy(): void;
  focus(): void;
  clear(): void;
  on<E extends CardFieldsEventName>(event: E, handler: (payload: CardFieldsEventMap[E]) => void): unknown;
}
