import { forwardRef, useImperativeHandle, type CSSProperties } from 'react';
import type { CardFields as SdkCardFields, CardFieldsUpdate, TokenizeResult } from './sdk';
import { notReadyError } from './notReady';
import { useFieldsFrame, type FieldsEventProps } from './useFieldsFrame';

export interface CardFieldsProps extends FieldsEventProps {
  /**
   * `cardFields()` options of tessera.js, without `container` (the component's own div). Compared by
   * value on each render: what changed reaches the mounted fields through `update()`, without a new
   * iframe (what the shopper typed stays).
   */
  options?: CardFieldsUpdate;
  id?: string;
  className?: string;
  style?: CSSProperties;
}

/** What a ref to `<CardFields>` gives. */
export interface CardFieldsHandle {
  /** Tokenizes what the shopper typed; rejects with a TesseraError (`code`, `type`, `message`, `retryAfter?`). */
  tokenize(): Promise<TokenizeResult>;
  focus(): void;
  clear(): void;
  /** The tessera.js card fields behind the component, or `null` before tessera.js has loaded. */
  readonly fields: SdkCardFields | null;
}

/**
 * Tessera's hosted card fields (number, expiry, CVC, optional name) in an iframe from the fields
 * origin, placed where this component renders. Needs a `<TesseraProvider>` above it.
 *
 *   const card = useRef<CardFieldsHandle>(null);
 *   <CardFields ref={card} options={{ holderName: true }} onChange={(e) => setComplete(e.complete)} />
 *   const { token } = await card.current!.tokenize();
 */
export const CardFields = forwardRef<CardFieldsHandle, CardFieldsProps>(function CardFields(
  { options = {}, id, className, style, ...events },
  ref,
) {
  const frame = useFieldsFrame('CardFields', options, '', (tessera, initial) => tessera.cardFields(initial), events);
  useImperativeHandle(
    ref,
    () => ({
      tokenize: () => frame.current()?.tokenize() ?? Promise.reject(notReadyError('CardFields')),
      focus: () => frame.current()?.focus(),
      clear: () => frame.current()?.clear(),
      get fields() {
        return frame.current();
      },
    }),
    [frame],
  );
  return <div ref={frame.container} id={id} className={className} style={style} />;
});
