import { forwardRef, useImperativeHandle, type CSSProperties } from 'react';
import type { CvcField as SdkCvcField, CvcFieldUpdate, CvcResult, CvcSessionGrant } from './sdk';
import { notReadyError } from './notReady';
import { useFieldsFrame, type FieldsEventProps } from './useFieldsFrame';

export interface CvcFieldProps extends FieldsEventProps {
  /**
   * The CVC session your server opened for the stored card's token (POST /v1/token/{token}/cvc-sessions):
   * its `{ token, secret }` or the whole answer. A new session (after `cvc_session_used` or
   * `cvc_session_expired`) makes a new field.
   */
  cvcSession: CvcSessionGrant;
  /** `cvcField()` options of tessera.js, without `container` and `cvcSession`; changes reach the field through `update()`. */
  options?: CvcFieldUpdate;
  id?: string;
  className?: string;
  style?: CSSProperties;
}

/** What a ref to `<CvcField>` gives. */
export interface CvcFieldHandle {
  /** Attaches the CVC to the session's token for its next render; resolves with `{ token }`. */
  submit(): Promise<CvcResult>;
  focus(): void;
  clear(): void;
  /** The tessera.js CVC field behind the component, or `null` before tessera.js has loaded. */
  readonly field: SdkCvcField | null;
}

/** The CVC-only field for a returning shopper's stored card. Needs a `<TesseraProvider>` above it. */
export const CvcField = forwardRef<CvcFieldHandle, CvcFieldProps>(function CvcField(
  { cvcSession, options = {}, id, className, style, ...events },
  ref,
) {
  const frame = useFieldsFrame(
    'CvcField',
    options,
    // The session is the field's identity: the same session passed again (a new object each render) keeps the field.
    `${cvcSession.token} ${cvcSession.secret}`,
    (tessera, initial) => tessera.cvcField({ ...initial, cvcSession }),
    events,
  );
  useImperativeHandle(
    ref,
    () => ({
      submit: () => frame.current()?.submit() ?? Promise.reject(notReadyError('CvcField')),
      focus: () => frame.current()?.focus(),
      clear: () => frame.current()?.clear(),
      get field() {
        return frame.current();
      },
    }),
    [frame],
  );
  return <div ref={frame.container} id={id} className={className} style={style} />;
});
