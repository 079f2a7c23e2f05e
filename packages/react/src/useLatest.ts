import { useInsertionEffect, useRef, type MutableRefObject } from 'react';

/**
 * A ref that always holds the latest value, so that handlers registered once with tessera.js call
 * the merchant's current callback (a new inline arrow each render) without re-registering.
 * Updated in an insertion effect: before any layout effect or event of this commit reads it.
 */
export function useLatest<T>(value: T): MutableRefObject<T> {
  const ref = useRef(value);
  useInsertionEffect(() => {
    ref.current = value;
  });
  return ref;
}
